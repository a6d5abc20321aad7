"""The contract's facts without a GPU or torch: datasheet peaks, version encodings, the driver table, the /dev/shm
judgement and the build manifest's reader (its lookup order too). Moved from the suite's helper tests, which need
torch: the contract is standard library only, so these run on the host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda_contract.driver import DriverRequirement, judge_driver, requirement_for_cuda
from pytorch_cuda_contract.manifest import ManifestError, find_manifest, parse_manifest
from pytorch_cuda_contract.peaks import PEAK_TABLE, lookup_peak
from pytorch_cuda_contract.shared_memory import shm_problem
from pytorch_cuda_contract.versions import (
    cudnn_version_int,
    cudnn_version_string,
    is_at_least,
    nccl_version_string,
    release_prefix,
    version_tuple,
)
from tests.support.suite_run import manifest_document


@pytest.mark.parametrize(
    ("device_name", "gpu"),
    [
        ("NVIDIA H200", "H200 SXM"),
        ("NVIDIA H200 NVL", "H200 NVL"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H100 NVL", "H100 NVL"),
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("NVIDIA A100 80GB PCIe", "A100"),
        ("NVIDIA A10", "A10"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("Tesla T4", "T4"),
        ("Tesla V100-SXM2-16GB", "V100 SXM2"),
        ("Tesla V100-PCIE-32GB", "V100 PCIe"),
        ("NVIDIA B200", "B200"),
    ],
)
def test_peak_lookup(device_name: str, gpu: str) -> None:
    spec = lookup_peak(device_name)
    assert spec is not None
    assert spec.gpu == gpu


def test_peak_values_from_datasheets() -> None:
    h200 = lookup_peak("NVIDIA H200")
    a100 = lookup_peak("NVIDIA A100-SXM4-40GB")
    assert h200 is not None
    assert a100 is not None
    assert (h200.fp32, h200.tf32, h200.fp16, h200.bf16) == (67.0, 494.7, 989.4, 989.4)
    assert (a100.fp32, a100.tf32, a100.fp16, a100.bf16) == (19.5, 156.0, 312.0, 312.0)
    t4 = lookup_peak("Tesla T4")
    assert t4 is not None
    assert t4.peak("bf16") is None
    assert t4.peak("tf32") is None


@pytest.mark.parametrize("name", ["NVIDIA GeForce RTX 4090", "NVIDIA A1000", "Radeon", "NVIDIA GH100"])
def test_unknown_gpu_has_no_peak(name: str) -> None:
    assert lookup_peak(name) is None


def test_peak_table_is_dense_and_ordered() -> None:
    for spec in PEAK_TABLE:
        assert spec.fp16 >= spec.fp32
        if spec.tf32 is not None:
            assert spec.fp16 == pytest.approx(2 * spec.tf32, rel=0.05)


@pytest.mark.parametrize(
    ("version", "encoded"),
    [("9.10.2.21", 91002), ("9.1.0.70", 90100), ("9.19.0.56", 91900), ("8.9.2.26", 8902), ("9.0.0", 90000)],
)
def test_cudnn_encoding(version: str, encoded: int) -> None:
    assert cudnn_version_int(version) == encoded
    assert cudnn_version_string(encoded) == release_prefix(version, 3)


def test_nccl_version_forms() -> None:
    assert nccl_version_string((2, 27, 5)) == "2.27.5"
    assert nccl_version_string((2, 21, 5, "")) == "2.21.5"  # type: ignore[arg-type]
    assert nccl_version_string(22705) == "2.27.5"
    assert nccl_version_string(2708) == "2.7.8"


def test_version_helpers() -> None:
    assert version_tuple("2.9.1+cu128") == (2, 9, 1)
    assert version_tuple("580.159.03") == (580, 159, 3)
    assert is_at_least("580.159.03", "570.26")
    assert not is_at_least("560.35.03", "570.26")
    with pytest.raises(ValueError, match="not a dotted version"):
        version_tuple("cu128")


def test_driver_verdicts() -> None:
    requirement = DriverRequirement(min_driver="570.26", compat_driver="525.60.13", source="manifest")
    assert judge_driver("580.159.04", "12.8", requirement).status == "ok"
    compat = judge_driver("535.183.01", "12.8", requirement)
    assert compat.status == "compat"
    too_old = judge_driver("470.256.02", "12.8", requirement)
    assert too_old.status == "too_old"
    assert "upgrade the NVIDIA driver to >= 570.26 or use the cu126 image" in too_old.message
    builtin = requirement_for_cuda("12.8")
    assert builtin is not None
    assert (builtin.min_driver, builtin.compat_driver) == ("570.26", "525.60.13")
    assert requirement_for_cuda("10.2") is None
    newer_minor = requirement_for_cuda("13.2")  # past the table: the newest older release's driver, a lower bound
    assert newer_minor is not None
    assert (newer_minor.min_driver, newer_minor.compat_driver) == ("580.65.06",) * 2
    assert "stops at CUDA 13.0" in newer_minor.source
    newer_major = requirement_for_cuda("14.1")
    assert newer_major is not None
    assert newer_major.min_driver == newer_major.compat_driver == "580.65.06"
    assert judge_driver("575.51.03", "14.1", newer_major).status == "too_old"  # no compat across majors


def test_shm_messages_name_the_fix() -> None:
    assert shm_problem(2 * 2**30) is None
    message = shm_problem(64 * 2**20)
    assert message is not None
    assert "64 MiB" in message
    assert "--shm-size=1g" in message
    assert "--ipc=host" in message
    assert shm_problem(None) is not None


def test_manifest_parsing() -> None:
    manifest = parse_manifest(manifest_document())
    assert manifest.pins.torch == "2.9.1+cu128"
    assert manifest.pins.get("cudnn") == "9.10.2.21"
    assert manifest.wheels["nccl"] == "nvidia-nccl-cu12"
    assert manifest.venv == "/opt/pytorch"
    with pytest.raises(ManifestError, match="unsupported schema 2"):
        parse_manifest(manifest_document(schema=2))
    with pytest.raises(ManifestError, match=r"pins\.cuda must be a string"):
        parse_manifest(manifest_document(pins={"cuda": 12.8}))
    with pytest.raises(ManifestError, match="missing required field 'target'"):
        parse_manifest({k: v for k, v in manifest_document().items() if k != "target"})


def test_manifest_lookup_order(tmp_path: Path) -> None:
    option_file = tmp_path / "option.json"
    env_file = tmp_path / "env.json"
    option_file.write_text(json.dumps(manifest_document(target="cu126")))
    env_file.write_text(json.dumps(manifest_document(target="cu128")))
    by_option = find_manifest(str(option_file), {"PYTORCH_CUDA_MANIFEST": str(env_file)})
    assert by_option.origin == "--manifest"
    assert by_option.manifest is not None
    assert by_option.manifest.target == "cu126"
    by_env = find_manifest(None, {"PYTORCH_CUDA_MANIFEST": str(env_file)})
    assert by_env.origin == "$PYTORCH_CUDA_MANIFEST"
    assert by_env.manifest is not None
    assert by_env.manifest.target == "cu128"
    missing = find_manifest(str(tmp_path / "nope.json"), {})
    assert missing.error is not None
    assert "does not exist" in missing.error
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert "not valid JSON" in str(find_manifest(str(broken), {}).error)
