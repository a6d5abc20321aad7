"""GPU-access diagnosis: every case of ``diagnose`` and a fake libcuda whose cuInit says the driver is too old."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conformance.support.probes.gpu_access import diagnose
from conformance.support.probes.gpu_gate import NO_GPU_EXIT_STATUS, no_gpu_paragraph
from pytorch_cuda_contract.driver import DriverRequirement
from tests.support.suite_run import SCRUBBED_ENV, SUITE, manifest_document, run_suite, write_manifest

REQUIREMENT = DriverRequirement("570.26", "525.60.13", "manifest")
WORKING = {"device_nodes": ["/dev/nvidia0", "/dev/nvidiactl"], "nvml_driver": "580.159.04", "libcuda": "libcuda.so.1"}


@pytest.mark.parametrize(
    ("probe", "visible", "status", "case", "phrase"),
    [
        ({"device_nodes": [], "libcuda": None}, None, "no_gpu", "no_device_nodes", "--gpus all"),
        (
            {"device_nodes": ["/dev/nvidia0"], "libcuda": None, "libcuda_error": "x"},
            None,
            "broken",
            "no_libcuda",
            "compute",
        ),
        ({**WORKING, "cu_init": 35, "cuda_driver_api": 12020}, None, "broken", "driver_too_old", ">= 570.26"),
        ({**WORKING, "cu_init": 803}, None, "broken", "driver_too_old", "cuda-compat"),
        ({**WORKING, "cu_init": 100}, "", "no_gpu", "hidden", "CUDA_VISIBLE_DEVICES=''"),
        ({**WORKING, "device_nodes": [], "cu_init": 100}, None, "no_gpu", "no_device_nodes", "--gpus all"),
        ({**WORKING, "cu_init": 999}, None, "broken", "cuda_init_failed", "CUDA_ERROR_UNKNOWN"),
        ({**WORKING, "cu_init": 0, "device_count": 1}, None, "ok", "ok", "1 CUDA device"),
        ({"error": "boom"}, None, "broken", "probe_failed", "boom"),
    ],
)
def test_diagnose_names_each_case(
    probe: dict[str, object], visible: str | None, status: str, case: str, phrase: str
) -> None:
    access = diagnose(probe, "12.8", REQUIREMENT, visible)
    assert (access.status, access.case) == (status, case)
    assert phrase in access.message


FAKE_LIBCUDA = """
int cuDriverGetVersion(int *v) { *v = 12020; return 0; }
int cuInit(unsigned int flags) { (void)flags; return 35; }
int cuDeviceGetCount(int *c) { *c = 0; return 3; }
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build a fake libcuda")
def test_fake_old_libcuda_fails_access_check_naming_the_minimum_driver(tmp_path: Path) -> None:
    libdir = tmp_path / "driver"
    libdir.mkdir()
    source = libdir / "fake.c"
    source.write_text(FAKE_LIBCUDA)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(libdir / "libcuda.so.1"), str(source)], check=True)
    manifest = write_manifest(tmp_path, manifest_document())
    run = run_suite(
        tmp_path, "--manifest", str(manifest), keyword="cuda_driver_stack", env={"LD_LIBRARY_PATH": str(libdir)}
    )
    assert run.outcome("test_cuda_driver_stack_is_usable") == "failed"
    message = run.message("test_cuda_driver_stack_is_usable")
    assert "[driver_too_old]" in message
    assert "CUDA_ERROR_INSUFFICIENT_DRIVER" in message
    assert "CUDA 12.8 needs driver >= 570.26" in message
    assert "supports CUDA 12.2" in message


@pytest.mark.skipif(torch.cuda.is_available(), reason="this host has a GPU")
def test_require_gpu_turns_missing_gpu_into_failure(tmp_path: Path) -> None:
    required = run_suite(tmp_path, "--require-gpu", marker="gpu", keyword="cuda_initialises")
    assert required.returncode != 0
    assert required.outcome("test_cuda_initialises") == "failed"
    assert required.message("test_cuda_initialises").startswith("--require-gpu: no GPU visible")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this host has a GPU")
def test_require_gpus_fails_multigpu_checks_instead_of_skipping(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--require-gpus", "2", marker="multigpu or gpu", keyword="nccl_allreduce")
    assert run.returncode != 0
    records = [r for nodeid, r in run.document["tests"].items() if "nccl" in nodeid and r["outcome"] != "not_run"]
    assert records
    assert all(r["outcome"] == "failed" for r in records), records
    assert all(r["message"].startswith("--require-gpus 2:") for r in records), records


NO_GPU_HERE = not any(Path("/dev").glob("nvidia[0-9]*"))


@pytest.mark.skipif(not NO_GPU_HERE, reason="this host has /dev/nvidia* devices")
def test_no_device_nodes_named_as_the_cause(tmp_path: Path) -> None:
    """Without a GPU the cpu-marked access check names the case; with --require-gpu it fails."""
    plain = run_suite(tmp_path, keyword="cuda_driver_stack")
    assert plain.outcome("test_cuda_driver_stack_is_usable") == "skipped"
    assert "[no_device_nodes]" in plain.message("test_cuda_driver_stack_is_usable")
    required = run_suite(tmp_path, "--require-gpu", keyword="cuda_driver_stack")
    assert required.outcome("test_cuda_driver_stack_is_usable") == "failed"
    message = required.message("test_cuda_driver_stack_is_usable")
    assert "[no_device_nodes]" in message
    assert "--gpus all" in message


STOPPED = "no GPU is visible, and this run selects"


@pytest.mark.skipif(not NO_GPU_HERE or torch.cuda.is_available(), reason="this host has a GPU")
def test_no_selection_without_gpu_stops_with_one_paragraph(tmp_path: Path) -> None:
    """Fail closed: with no -m, the GPU checks are not skipped into a pass; `-m cpu` stays green."""
    stopped = run_suite(tmp_path, marker=None, keyword="cuda_initialises or pip_check")
    assert stopped.returncode == NO_GPU_EXIT_STATUS == 4, stopped.output[-3000:]
    assert f"{STOPPED} 1 GPU checks" in stopped.output
    for looked_for in ("torch.cuda.device_count(): 0", "NVIDIA_VISIBLE_DEVICES", "libcuda.so.1", "--gpus all",
                       "`conformance -m cpu`"):  # fmt: skip
        assert looked_for in stopped.output, looked_for
    assert stopped.document["tests"] == {} or all(r["outcome"] != "passed" for r in stopped.document["tests"].values())
    void = run_suite(tmp_path, marker=None, keyword="cuda_initialises", env={"NVIDIA_VISIBLE_DEVICES": "void"})
    assert void.returncode == 4
    assert "NVIDIA_VISIBLE_DEVICES: 'void'" in void.output
    cpu = run_suite(tmp_path, marker="cpu", keyword="pip_check or fp32_matmul_policy")
    assert cpu.returncode == 0, cpu.output[-3000:]
    only_cpu = run_suite(tmp_path, marker=None, keyword="fp32_matmul_policy")  # no GPU check selected: it runs
    assert only_cpu.returncode == 0, only_cpu.output[-3000:]


@pytest.mark.skipif(not NO_GPU_HERE or torch.cuda.is_available(), reason="this host has a GPU")
@pytest.mark.parametrize(
    ("marker", "keyword", "selected"),
    [
        ("gpu", None, "-m gpu: every GPU check"),
        ("gpu or cpu", "cuda_initialises or pip_check", "-m 'gpu or cpu' with -k"),
        ("multigpu", None, "-m multigpu"),
        (None, "amp", "-k amp"),
        ("not cpu", "cuda_initialises", "-m 'not cpu'"),
    ],
)
def test_any_selection_of_a_gpu_check_without_gpu_stops(
    tmp_path: Path, marker: str | None, keyword: str | None, selected: str
) -> None:
    """Fail closed whatever selects the GPU checks (issue 52): `-m gpu` on a runner whose GPU did not come up is
    exit status 4 and the paragraph, never every GPU check skipped and exit 0."""
    stopped = run_suite(tmp_path, marker=marker, keyword=keyword)
    assert stopped.returncode == NO_GPU_EXIT_STATUS, (selected, stopped.output[-3000:])
    assert STOPPED in stopped.output, selected
    assert not any(r["outcome"] in ("passed", "skipped") for r in stopped.document["tests"].values()), selected


@pytest.mark.skipif(not NO_GPU_HERE or torch.cuda.is_available(), reason="this host has a GPU")
def test_a_gpu_checks_node_id_without_gpu_stops(tmp_path: Path) -> None:
    """A path and node id select a GPU check as surely as -m does."""
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")
    json_path = tmp_path / "conformance.json"
    node = f"{SUITE}/test_device.py::test_cuda_initialises"
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ini), "-p", "no:cacheprovider", node, "-q",
         "--conformance-json", str(json_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
        env={k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV},
    )  # fmt: skip
    assert ran.returncode == NO_GPU_EXIT_STATUS, (ran.stdout + ran.stderr)[-3000:]
    assert f"{STOPPED} 1 GPU checks" in ran.stdout + ran.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ini), "-p", "no:cacheprovider", node, "-q", "--collect-only"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
        env={k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV},
    )  # fmt: skip
    assert listed.returncode == 0, (listed.stdout + listed.stderr)[-3000:]  # listing judges nothing: no refusal


def test_no_gpu_paragraph_names_what_was_looked_for() -> None:
    paragraph = no_gpu_paragraph(64, {"torch.cuda.device_count()": "0", "NVIDIA_VISIBLE_DEVICES": "'void'"})
    assert "\n" not in paragraph
    assert "this run selects 64 GPU checks" in paragraph
    assert "skip them and pass" in paragraph
    assert "torch.cuda.device_count(): 0; NVIDIA_VISIBLE_DEVICES: 'void'" in paragraph
    assert "exit status 4" in paragraph
    assert "-m cpu" in paragraph
