"""Exactly one copy of cuBLAS, cuBLASLt, cuDNN and NCCL, from the expected place."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import torch

from conformance.support.probes.libmaps import (
    cudnn_directories,
    default_library_directories,
    expected_library_root,
    group_libraries,
    ldconfig_problem,
    libraries_outside,
    parse_ldconfig,
    parse_proc_maps,
    scan_default_directories,
    scan_ld_library_path,
    scan_ldconfig,
)
from conformance.support.probes.setting_hint import known_setting_hint
from conformance.support.results.not_judged import not_judged_when_carried
from conformance.support.results.recorder import RecordNote
from pytorch_cuda_contract.carried_stack import RunStack
from pytorch_cuda_contract.manifest import BARE_HOST_TARGET, Manifest

LDCONFIG_FALLBACKS = ("/sbin/ldconfig", "/usr/sbin/ldconfig")
LIBRARIES_PROBE = Path(__file__).resolve().parent / "support" / "probes" / "probe_libs.py"


def _library_root(manifest: Manifest | None, stack: RunStack) -> str:
    """Where the NVIDIA libraries must come from: the carried venv's on the shipped stack carried to a bare host
    (the image's venv path is not there), else the manifest's venv, else beside the imported torch."""
    if manifest is not None:
        return expected_library_root(manifest.venv, manifest.python, torch.__file__, stack.library_root)
    return expected_library_root(None, None, torch.__file__, stack.library_root)


@pytest.mark.gpu
def test_cuda_libraries_loaded_once(
    optional_manifest: Manifest | None, run_stack: RunStack, tmp_path: Path, record_note: RecordNote
) -> None:
    """Fails when after a matmul, a conv and an NCCL all-reduce in a fresh subprocess, `/proc/self/maps` shows two
    copies of cuBLAS/cuBLASLt/cuDNN/NCCL, cuDNN pieces from several folders, or (with a manifest, or on a carried
    stack) libraries outside `<venv>/lib/pythonX.Y/site-packages/nvidia` (on a carried stack: the carried venv's)."""
    result = subprocess.run(
        [sys.executable, str(LIBRARIES_PROBE), str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, (
        f"library probe (matmul, conv, all-reduce) failed:\n{result.stderr[-3000:]}{known_setting_hint()}"
    )
    maps = parse_proc_maps(json.loads(result.stdout.strip().splitlines()[-1])["maps"])
    groups = group_libraries(maps)
    for family, paths in groups.items():
        record_note(f"{family}: {', '.join(paths) or 'not mapped'}")
    duplicates = {family: paths for family, paths in groups.items() if len(paths) > 1}
    assert not duplicates, f"more than one copy loaded (a foreign CUDA library shadows the wheels): {duplicates}"
    cudnn_dirs = cudnn_directories(maps)
    assert len(cudnn_dirs) <= 1, f"libcudnn pieces loaded from several directories: {cudnn_dirs}"
    missing = [family for family, paths in groups.items() if not paths]
    if optional_manifest is not None or run_stack.carried is not None:
        assert not missing, f"not loaded after matmul, conv and all-reduce: {missing}"
        root = _library_root(optional_manifest, run_stack)
        outside = libraries_outside(groups, root)
        assert not outside, f"CUDA libraries loaded from outside {root}: {outside}; remove the foreign copies"
    elif missing:
        record_note(f"not mapped as shared libraries (statically linked?): {missing}")


@pytest.mark.cpu
def test_ld_library_path_has_no_foreign_cuda_libraries(optional_manifest: Manifest | None, run_stack: RunStack) -> None:
    """Fails when an LD_LIBRARY_PATH entry holds libcublas/libcudnn/libnccl outside the wheels' folder (on a carried
    stack: the carried venv's), or is a CUDA `stubs` folder."""
    value = os.environ.get("LD_LIBRARY_PATH", "")
    findings = scan_ld_library_path(value, [_library_root(optional_manifest, run_stack)])
    assert not findings, (
        "LD_LIBRARY_PATH would shadow torch's CUDA libraries: "
        + "; ".join(str(f) for f in findings)
        + ". Remove these entries from LD_LIBRARY_PATH"
    )


def _multiarch() -> str | None:
    value = sysconfig.get_config_var("MULTIARCH")
    return value if isinstance(value, str) and value else f"{platform.machine()}-linux-gnu"


@pytest.mark.cpu
def test_ldconfig_has_no_second_cuda_library(
    optional_manifest: Manifest | None, run_stack: RunStack, record_note: RecordNote
) -> None:
    """The loader cache (``ldconfig -p``) and the loader's default directories, which dlopen searches even for
    a file the cache does not list (a copy dropped there without running ldconfig). Not judged on a carried stack:
    they are the host's."""
    not_judged_when_carried(
        run_stack,
        "the loader cache (ldconfig -p) and /usr/lib are the host's, not the carried stack's; "
        "test_cuda_libraries_loaded_once judges what is loaded, from the carried venv",
    )
    ldconfig = shutil.which("ldconfig") or next((p for p in LDCONFIG_FALLBACKS if os.path.exists(p)), None)
    if ldconfig is None:
        pytest.skip("no ldconfig on this system")
    result = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=60, check=False)
    problem = ldconfig_problem(result.returncode, result.stdout, result.stderr)
    assert problem is None, (
        f"`{ldconfig} -p` {problem}: the loader cache cannot be read, so a second CUDA library in it cannot be "
        "ruled out; regenerate it with `ldconfig` (a corrupt or missing /etc/ld.so.cache)"
    )
    roots = [_library_root(optional_manifest, run_stack)]
    findings = scan_ldconfig(parse_ldconfig(result.stdout), roots)
    directories = default_library_directories(_multiarch())
    findings += scan_default_directories(directories, roots, known=[f.location for f in findings])
    record_note(f"searched the loader cache and {', '.join(directories)}")
    bare_host = optional_manifest is not None and optional_manifest.target == BARE_HOST_TARGET
    if (optional_manifest is None or bare_host) and findings:
        # Without an image's manifest nothing says which copy is the right one (a bare host's CUDA toolkit or its
        # cuDNN/NCCL packages are legitimate); test_cuda_libraries_loaded_once gates what is actually loaded.
        paths = sorted({f.location for f in findings})
        pytest.skip(
            f"{'a bare host' if bare_host else 'no build manifest'}: "
            f"the loader cache and default directories hold {len(paths)} cuBLAS/cuDNN/NCCL "
            f"files outside torch's wheels {paths[:5]}, not gated; pass --manifest FILE to check that the image "
            "carries no second copy"
        )
    assert not findings, (
        "the dynamic loader can find CUDA libraries outside the venv (a dlopen by soname may pick them): "
        + "; ".join(str(f) for f in findings)
        + ". Remove the system copies from the image"
    )
