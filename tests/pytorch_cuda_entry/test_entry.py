"""The entry banner, its warnings and pytorch-cuda-info, with fakes at the probe boundary."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from pytorch_cuda_contract.gpu import ComputeCapability, GpuDevice
from pytorch_cuda_contract.shared_memory import SHM_FIX
from pytorch_cuda_entry import info
from pytorch_cuda_entry.banner import compose
from pytorch_cuda_entry.environment_warnings import NO_GPU_FIX, warnings
from pytorch_cuda_entry.facts import Environment, ImageFacts

H200 = GpuDevice(0, "NVIDIA H200", ComputeCapability(9, 0), 143_771_336_704)
T4 = GpuDevice(1, "Tesla T4", ComputeCapability(7, 5), 16 * 2**30)
CU128 = ImageFacts(target="cu128", flavour="runtime", cuda="12.8", min_driver="570.26", compat_driver="525.60.13")


def healthy(**changes: object) -> Environment:
    env = Environment(
        torch="2.9.1+cu128",
        cuda="12.8",
        cudnn="9.10.2",
        nccl="2.27.5",
        python="3.13.5",
        gpus=(H200,),
        gpu_problem=None,
        driver="580.159.04",
        shm_bytes=16 * 2**30,
        image=CU128,
    )
    return replace(env, **changes)  # type: ignore[arg-type]


def test_healthy_host_has_no_warnings() -> None:
    assert warnings(healthy()) == []


def test_banner_shows_versions_gpus_bf16_and_conformance() -> None:
    text = compose(healthy(gpus=(H200, T4)))
    assert "PyTorch 2.9.1+cu128  CUDA 12.8  cuDNN 9.10.2  NCCL 2.27.5" in text
    assert "GPU 0:   NVIDIA H200, cc 9.0, 133.9 GiB, native bf16: yes" in text
    assert "GPU 1:   Tesla T4, cc 7.5, 16.0 GiB, native bf16: no" in text
    assert "conformance" in text
    assert "pytorch-cuda-info" in text
    assert "WARNING" not in text
    assert "(cu128-runtime)" in text


def test_no_gpu_warns_with_its_fix() -> None:
    env = healthy(gpus=(), gpu_problem="NVML: NVML Shared Library Not Found", driver=None)
    found = warnings(env)
    assert [w.fix for w in found] == [NO_GPU_FIX]
    assert "pass --gpus all, or install the NVIDIA Container Toolkit" in compose(env)
    assert "GPUs:    none visible" in compose(env)


@pytest.mark.parametrize(("size", "warned"), [(64 * 2**20, True), (2**30 - 1, True), (2**30, False), (None, False)])
def test_small_shm_warns_with_its_fix(size: int | None, warned: bool) -> None:
    found = warnings(healthy(shm_bytes=size))
    assert ([w.fix for w in found] == [SHM_FIX]) is warned
    if warned:
        assert "run the container with --ipc=host or --shm-size=1g (or larger)" in compose(healthy(shm_bytes=size))
        assert "64 MiB" in found[0].problem or size != 64 * 2**20


@pytest.mark.parametrize(
    ("driver", "warned"),
    [("470.82.01", True), ("525.60.12", True), ("525.60.13", False), ("550.54.14", False), ("570.26", False)],
)
def test_old_driver_warns_with_minimum_and_forward_compat(driver: str, warned: bool) -> None:
    found = warnings(healthy(driver=driver))
    assert bool(found) is warned
    if warned:
        (warning,) = found
        assert "570.26" in warning.problem
        assert "525.60.13" in warning.problem
        assert "forward compatibility" in warning.fix
        assert "upgrade the host's driver to 570.26" in warning.fix


def test_driver_judged_without_manifest_uses_the_cuda_table() -> None:
    found = warnings(healthy(image=ImageFacts(), driver="520.00"))
    assert len(found) == 1
    assert "12.8" in found[0].problem


def test_every_warning_at_once() -> None:
    env = healthy(gpus=(), shm_bytes=64 * 2**20, driver="470.82.01")
    assert [w.fix for w in warnings(env)][:2] == [NO_GPU_FIX, SHM_FIX]
    assert compose(env).count("WARNING:") == 3


def test_info_text_and_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("pytorch_cuda_entry.environment.probe_environment", lambda: healthy(shm_bytes=64 * 2**20))
    assert info.main([]) == 0
    text = capsys.readouterr().out
    assert "torch:      2.9.1+cu128" in text
    assert "/dev/shm:   64 MiB" in text
    assert "cu128-runtime (CUDA 12.8, driver >= 570.26" in text
    assert SHM_FIX in text
    assert info.main(["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gpus"][0] == {
        "index": 0,
        "name": "NVIDIA H200",
        "capability": [9, 0],
        "memory_bytes": 143_771_336_704,
        "cc": "9.0",
        "native_bf16": True,
    }
    assert data["warnings"] == [{"problem": warnings(healthy(shm_bytes=64 * 2**20))[0].problem, "fix": SHM_FIX}]
    assert data["image"]["min_driver"] == "570.26"


def test_a_setting_measured_to_break_this_stack_warns_with_its_fix() -> None:
    env = healthy(settings=(("CUDA_MODULE_LOADING", "EAGER"),))
    found = warnings(env)
    assert [w.fix for w in found] == ["unset CUDA_MODULE_LOADING (CUDA 12's default, LAZY, works)"]
    assert "invalid resource handle" in compose(env)
    assert warnings(healthy(settings=(("CUDA_MODULE_LOADING", "LAZY"),))) == []
    assert warnings(healthy(settings=(("CUDA_MODULE_LOADING", "EAGER"),), nccl="2.28.9")) == []
