"""Exactly one copy of cuBLAS, cuBLASLt, cuDNN and NCCL, from the expected place."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conformance.support.probes.libmaps import (
    cudnn_directories,
    expected_library_root,
    group_libraries,
    libraries_outside,
    parse_ldconfig,
    parse_proc_maps,
    scan_ld_library_path,
    scan_ldconfig,
)
from conformance.support.results.recorder import RecordNote
from pytorch_cuda_contract.manifest import Manifest

LDCONFIG_FALLBACKS = ("/sbin/ldconfig", "/usr/sbin/ldconfig")
PROBE = Path(__file__).resolve().parent / "support" / "probes" / "probe_libs.py"


def _library_root(manifest: Manifest | None) -> str:
    if manifest is not None:
        return expected_library_root(manifest.venv, manifest.python, torch.__file__)
    return expected_library_root(None, None, torch.__file__)


@pytest.mark.gpu
def test_cuda_libraries_loaded_once(
    optional_manifest: Manifest | None, tmp_path: Path, record_note: RecordNote
) -> None:
    result = subprocess.run(
        [sys.executable, str(PROBE), str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, f"library probe (matmul, conv, all-reduce) failed:\n{result.stderr[-3000:]}"
    maps = parse_proc_maps(json.loads(result.stdout.strip().splitlines()[-1])["maps"])
    groups = group_libraries(maps)
    for family, paths in groups.items():
        record_note(f"{family}: {', '.join(paths) or 'not mapped'}")
    duplicates = {family: paths for family, paths in groups.items() if len(paths) > 1}
    assert not duplicates, f"more than one copy loaded (a foreign CUDA library shadows the wheels): {duplicates}"
    cudnn_dirs = cudnn_directories(maps)
    assert len(cudnn_dirs) <= 1, f"libcudnn pieces loaded from several directories: {cudnn_dirs}"
    missing = [family for family, paths in groups.items() if not paths]
    if optional_manifest is not None:
        assert not missing, f"not loaded after matmul, conv and all-reduce: {missing}"
        root = _library_root(optional_manifest)
        outside = libraries_outside(groups, root)
        assert not outside, f"CUDA libraries loaded from outside {root}: {outside}; remove the foreign copies"
    elif missing:
        record_note(f"not mapped as shared libraries (statically linked?): {missing}")


@pytest.mark.cpu
def test_ld_library_path_has_no_foreign_cuda_libraries(optional_manifest: Manifest | None) -> None:
    value = os.environ.get("LD_LIBRARY_PATH", "")
    findings = scan_ld_library_path(value, [_library_root(optional_manifest)])
    assert not findings, (
        "LD_LIBRARY_PATH would shadow torch's CUDA libraries: "
        + "; ".join(str(f) for f in findings)
        + ". Remove these entries from LD_LIBRARY_PATH"
    )


@pytest.mark.cpu
def test_ldconfig_has_no_second_cuda_library(optional_manifest: Manifest | None, record_note: RecordNote) -> None:
    ldconfig = shutil.which("ldconfig") or next((p for p in LDCONFIG_FALLBACKS if os.path.exists(p)), None)
    if ldconfig is None:
        pytest.skip("no ldconfig on this system")
    result = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=60, check=False)
    findings = scan_ldconfig(parse_ldconfig(result.stdout), [_library_root(optional_manifest)])
    if optional_manifest is None and findings:
        # Without a manifest nothing says which copy is the right one (a bare host's CUDA toolkit is
        # legitimate); test_cuda_libraries_loaded_once gates what is actually loaded.
        paths = sorted({f.location for f in findings})
        pytest.skip(
            f"no build manifest: the loader cache lists {len(paths)} cuBLAS/cuDNN/NCCL files outside torch's "
            f"wheels {paths[:5]}, not gated; pass --manifest FILE to check that the image carries no second copy"
        )
    assert not findings, (
        "the dynamic loader cache lists CUDA libraries outside the venv (a dlopen by soname may pick them): "
        + "; ".join(str(f) for f in findings)
        + ". Remove the system copies from the image"
    )
