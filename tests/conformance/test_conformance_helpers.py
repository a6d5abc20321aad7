"""Unit tests of the conformance suite's pure helpers (no GPU, no subprocess)."""

from __future__ import annotations

import pytest
import torch

from conformance.support.expectations.pins import compare_cudnn, compare_exact, compare_nccl, pick_wheel
from conformance.support.probes.c_compiler import CompilerChoice, CompilerProblem, resolve_c_compiler
from conformance.support.probes.devices import judge_arch
from conformance.support.probes.libmaps import (
    cudnn_directories,
    expected_library_root,
    group_libraries,
    parse_ldconfig,
    parse_proc_maps,
    scan_ld_library_path,
    scan_ldconfig,
)
from conformance.support.processes.env import apply_safe_distributed_env
from conformance.support.workloads.collectives import allreduce_expected, allreduce_inputs, bus_bandwidth_gbps
from conformance.support.workloads.numerics import gemm_tflops, normalized_error


def test_pin_comparisons_name_both_values() -> None:
    assert compare_exact("torch", "2.9.1+cu128", "2.9.1+cu128", "torch.__version__") is None
    message = compare_exact("torch", "2.9.1+cu128", "2.9.0+cu128", "torch.__version__")
    assert message is not None
    assert "2.9.1+cu128" in message
    assert "2.9.0+cu128" in message
    assert compare_cudnn("9.10.2.21", 91002) is None
    wrong_cudnn = compare_cudnn("9.10.2.21", 90800)
    assert wrong_cudnn is not None
    assert "91002" in wrong_cudnn
    assert "9.8.0" in wrong_cudnn
    missing_cudnn = compare_cudnn("9.10.2.21", None)
    assert missing_cudnn is not None
    assert "is None" in missing_cudnn
    assert compare_nccl("2.27.5", "2.27.5") is None
    wrong_nccl = compare_nccl("2.27.5", "2.26.2")
    assert wrong_nccl is not None
    assert "2.26.2" in wrong_nccl


def test_pick_wheel_prefers_manifest_then_autodetects() -> None:
    installed = {"nvidia-cudnn-cu12": "9.10.2.21", "nvidia-nccl-cu13": "2.28.9"}
    assert pick_wheel("cudnn", {"cudnn": "nvidia-cudnn-cu12"}, installed.get) == ("nvidia-cudnn-cu12", "9.10.2.21")
    assert pick_wheel("cudnn", {"cudnn": "nvidia-cudnn-cu11"}, installed.get) == ("nvidia-cudnn-cu11", None)
    assert pick_wheel("nccl", None, installed.get) == ("nvidia-nccl-cu13", "2.28.9")
    assert pick_wheel("nccl", None, lambda name: None) == (None, None)


@pytest.mark.parametrize(
    ("capability", "arch_list", "ok", "exact"),
    [
        ((9, 0), ["sm_80", "sm_86", "sm_90", "sm_100"], True, True),
        ((8, 9), ["sm_80", "sm_86", "sm_90"], True, False),  # L4/L40S run sm_86 cubins
        ((12, 1), ["sm_90", "compute_120"], True, False),  # PTX JIT
        ((7, 0), ["sm_75", "sm_80", "sm_90"], False, False),  # V100 dropped
        ((9, 0), ["sm_80", "sm_90a"], True, True),
        ((10, 0), ["sm_80", "sm_90a"], False, False),  # arch-specific cubins do not carry over
    ],
)
def test_arch_judgement(capability: tuple[int, int], arch_list: list[str], ok: bool, exact: bool) -> None:
    verdict = judge_arch(capability, arch_list)
    assert (verdict.ok, verdict.exact) == (ok, exact), verdict.message


SITE = "/opt/pytorch/lib/python3.13/site-packages/nvidia"
MAPS = "\n".join(
    [
        f"7f0000000000-7f0000001000 r--p 00000000 08:01 1 {SITE}/cublas/lib/libcublas.so.12",
        f"7f0000001000-7f0000002000 r-xp 00001000 08:01 1 {SITE}/cublas/lib/libcublas.so.12",
        f"7f0000002000-7f0000003000 r--p 00000000 08:01 2 {SITE}/cublas/lib/libcublasLt.so.12",
        "7f0000003000-7f0000004000 r--p 00000000 08:01 3 /usr/local/cuda/lib64/libcublas.so.12 (deleted)",
        f"7f0000004000-7f0000005000 r--p 00000000 08:01 4 {SITE}/cudnn/lib/libcudnn.so.9",
        f"7f0000005000-7f0000006000 r--p 00000000 08:01 5 {SITE}/cudnn/lib/libcudnn_graph.so.9",
        f"7f0000006000-7f0000007000 r--p 00000000 08:01 6 {SITE}/nccl/lib/libnccl.so.2",
        "7f0000007000-7f0000008000 rw-p 00000000 00:00 0 [heap]",
        "7f0000008000-7f0000009000 r--p 00000000 08:01 7 /tmp/dir with space/libfoo.so",
    ]
)


def test_proc_maps_parsing_and_grouping() -> None:
    paths = parse_proc_maps(MAPS)
    assert "/usr/local/cuda/lib64/libcublas.so.12" in paths
    assert "/tmp/dir with space/libfoo.so" in paths
    assert "[heap]" not in paths
    assert len(paths) == len(set(paths))
    groups = group_libraries(paths, resolve=lambda p: p)
    assert len(groups["cublas"]) == 2  # the foreign copy is detected
    assert len(groups["cublasLt"]) == 1
    assert groups["nccl"] == [f"{SITE}/nccl/lib/libnccl.so.2"]
    assert cudnn_directories(paths, resolve=lambda p: p) == [f"{SITE}/cudnn/lib"]


def test_ld_library_path_scan() -> None:
    listings = {"/foreign/lib64": ["libcudnn.so.9", "libz.so"], "/opt/ok": ["libcublas.so.12"], "/empty": []}

    def listdir(path: str) -> list[str]:
        if path not in listings:
            raise FileNotFoundError(path)
        return listings[path]

    value = "/foreign/lib64::/opt/ok:/usr/local/cuda/lib64/stubs:/empty:/missing"
    findings = scan_ld_library_path(value, ["/opt/ok"], listdir=listdir)
    assert [f.location for f in findings] == ["/foreign/lib64", "/usr/local/cuda/lib64/stubs"]
    assert "libcudnn.so.9" in findings[0].detail
    assert scan_ld_library_path("", ["/opt/ok"], listdir=listdir) == []


def test_ldconfig_scan() -> None:
    text = (
        "3 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n"
        "\tlibcudnn_graph.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9\n"
        "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n"
    )
    pairs = parse_ldconfig(text)
    assert len(pairs) == 3
    findings = scan_ldconfig(pairs, ["/opt/pytorch"])
    assert [f.location for f in findings] == [
        "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
        "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9",
    ]


def test_expected_library_root() -> None:
    assert expected_library_root("/opt/pytorch", "3.13", "/x/torch/__init__.py") == (
        "/opt/pytorch/lib/python3.13/site-packages/nvidia"
    )
    root = expected_library_root(None, None, torch.__file__)
    assert root.endswith("site-packages/nvidia")


def test_bus_bandwidth_formula() -> None:
    assert bus_bandwidth_gbps(10**9, 1.0, 2) == pytest.approx(1.0)
    assert bus_bandwidth_gbps(10**9, 0.5, 8) == pytest.approx(2.0 * 2 * 7 / 8)
    assert bus_bandwidth_gbps(10**9, 1.0, 1) == 0.0


@pytest.mark.parametrize("world_size", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("op", ["sum", "max", "avg"])
def test_allreduce_expectations_are_exact_in_bf16(world_size: int, op: str) -> None:
    expected = allreduce_expected(op, 64, world_size, torch.device("cpu"))
    if op != "avg" or world_size in (1, 2, 4, 8):
        assert torch.equal(expected.to(torch.bfloat16).float(), expected)
        assert torch.equal(expected.to(torch.float16).float(), expected)
    assert allreduce_inputs(0, 64, torch.device("cpu")).abs().max() <= 8


def test_normalized_error_and_tflops() -> None:
    reference = torch.tensor([3.0, 4.0])
    assert normalized_error(reference, reference) == 0.0
    assert normalized_error(torch.tensor([3.0, 4.5]), reference) == pytest.approx(0.1)
    assert gemm_tflops(8192, 8192, 8192, 1.0) == pytest.approx(2 * 8192**3 / 1e-3 / 1e12)


def test_compiler_resolution() -> None:
    def which(name: str) -> str | None:
        return {"gcc": "/usr/bin/gcc", "ccache": "/usr/bin/ccache"}.get(name)

    assert resolve_c_compiler({}, which) == CompilerChoice(("/usr/bin/gcc",), "PATH")
    assert resolve_c_compiler({"CC": "ccache gcc"}, which) == CompilerChoice(("/usr/bin/ccache", "gcc"), "CC")
    missing = resolve_c_compiler({"CC": "/nope/cc"}, which)
    assert isinstance(missing, CompilerProblem)
    assert "CC='/nope/cc'" in missing.message
    none = resolve_c_compiler({"PATH": "/empty"}, lambda name: None)
    assert isinstance(none, CompilerProblem)
    assert "no C compiler" in none.message


def test_safe_distributed_env_overrides_user_values() -> None:
    environ = {"NCCL_NVLS_ENABLE": "1", "NVSHMEM_DISABLE_NVLS": "0"}
    assert apply_safe_distributed_env(environ) == {
        "NCCL_NVLS_ENABLE": "0",
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1",
    }
    opted_out = {"NCCL_NVLS_ENABLE": "1", "CONFORMANCE_ALLOW_NVLS": "1"}
    applied = apply_safe_distributed_env(opted_out)
    assert applied["NCCL_NVLS_ENABLE"] == "1"
    assert applied["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
