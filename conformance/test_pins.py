"""Pins and libraries: torch, CUDA, cuDNN, NCCL and Triton are what the manifest says.

All cpu-marked: inside the image these work without a GPU (cuDNN and NCCL
versions are read from the libraries, which must load).  Without a manifest the
pin checks skip; the wheel-consistency checks still run.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest
import torch

from conformance.support.expectations.pins import compare_cudnn, compare_exact, compare_nccl, pick_wheel
from conformance.support.probes.inventory import distribution_version, torch_cudnn_version, torch_nccl_version
from conformance.support.results.not_judged import not_judged_when_carried
from conformance.support.results.recorder import RecordNote
from pytorch_cuda_contract.carried_stack import RunStack
from pytorch_cuda_contract.manifest import Manifest

pytestmark = pytest.mark.cpu


def _pin(manifest: Manifest, name: str) -> str:
    value = manifest.pins.get(name)
    if value is None:
        pytest.skip(f"manifest {manifest.target} has no {name} pin")
    return value


def test_torch_version_matches_pin(manifest: Manifest) -> None:
    """Fails when `torch.__version__` differs from `pins.torch` (both named)."""
    problem = compare_exact("torch", _pin(manifest, "torch"), torch.__version__, "torch.__version__")
    assert problem is None, problem


def test_cuda_runtime_matches_pin(manifest: Manifest) -> None:
    """Fails when `torch.version.cuda` differs from `pins.cuda`, or the torch build is CPU-only."""
    problem = compare_exact("CUDA runtime", _pin(manifest, "cuda"), torch.version.cuda, "torch.version.cuda")
    assert problem is None, problem


def test_cudnn_matches_pin(manifest: Manifest) -> None:
    """Fails when `torch.backends.cudnn.version()` is not the encoding of `pins.cudnn` (9.10.2 → 91002), or is None
    (libcudnn missing or deleted)."""
    problem = compare_cudnn(_pin(manifest, "cudnn"), torch_cudnn_version())
    assert problem is None, problem


def test_nccl_matches_pin(manifest: Manifest) -> None:
    """Fails when `torch.cuda.nccl.version()` differs from `pins.nccl`, or torch has no NCCL."""
    problem = compare_nccl(_pin(manifest, "nccl"), torch_nccl_version())
    assert problem is None, problem


def test_triton_matches_pin(manifest: Manifest) -> None:
    """Fails when the installed `triton` distribution differs from `pins.triton`, or is missing."""
    seen = distribution_version("triton")
    problem = compare_exact("Triton", _pin(manifest, "triton"), seen, "the installed triton distribution")
    assert problem is None, problem


def test_python_and_venv_match_manifest(manifest: Manifest, run_stack: RunStack) -> None:
    """Fails when the suite runs on another Python or outside the manifest's venv. On a carried stack: fails when
    the suite runs outside the carried venv, on another Python than the one it was made for, or imports torch from
    outside it; the image's Python and venv path are then not judged (the host has neither)."""
    carried = run_stack.carried
    if carried is not None:
        _judge_the_carried_venv(carried.prefix, carried.site_packages, carried.python)
        not_judged_when_carried(
            run_stack,
            f"the image's Python {manifest.python} and venv {manifest.venv} are not on this host; the carried "
            f"stack runs Python {carried.python} in {carried.prefix}, and torch is imported from there",
        )
    if manifest.python is not None:
        running = f"{sys.version_info.major}.{sys.version_info.minor}"
        assert running == manifest.python, (
            f"Python: manifest says {manifest.python} but the suite runs on {running} ({sys.executable}); "
            "run it with the image's venv python"
        )
    if manifest.venv is not None:
        prefix = os.path.realpath(sys.prefix)
        assert prefix == os.path.realpath(manifest.venv), (
            f"venv: manifest says {manifest.venv} but sys.prefix is {sys.prefix}; run `conformance` "
            "or activate the venv"
        )
        torch_path = os.path.realpath(torch.__file__)
        assert torch_path.startswith(prefix + os.sep), f"torch is imported from {torch_path}, outside {prefix}"


def _judge_the_carried_venv(prefix: str, site_packages: str, python: str) -> None:
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert running == python, (
        f"Python: the carried stack was made for {python} but the suite runs on {running} ({sys.executable}); "
        "run it with the carried venv's python"
    )
    assert os.path.realpath(sys.prefix) == os.path.realpath(prefix), (
        f"venv: the carried stack's venv is {prefix} but sys.prefix is {sys.prefix}; run the suite with "
        f"{prefix}/bin/python"
    )
    torch_path, root = os.path.realpath(torch.__file__), os.path.realpath(site_packages)
    assert torch_path.startswith(root + os.sep), (
        f"torch is imported from {torch_path}, outside the carried stack's {site_packages}: the run is not on the "
        "shipped stack; make the carried venv again so that it cannot see the host's packages"
    )


def _wheel_or_skip(library: str, manifest: Manifest | None) -> tuple[str, str]:
    name, version = pick_wheel(library, manifest.wheels if manifest else None, distribution_version)
    if name is None:
        if torch.version.cuda is None:
            pytest.skip(f"torch {torch.__version__} is a CPU-only build and no manifest names a {library} wheel")
        pytest.skip(f"no nvidia {library} wheel installed: torch uses a {library} from elsewhere")
    if version is None:
        pytest.fail(
            f"manifest names wheel {name} for {library} but it is not installed; reinstall it in the venv",
            pytrace=False,
        )
    return name, version


def test_torch_cudnn_matches_wheel(optional_manifest: Manifest | None, record_note: RecordNote) -> None:
    """Fails when torch's cuDNN/NCCL differ from the nvidia-* wheel (from the manifest's `wheels`, else
    nvidia-cudnn/nccl-cu13/cu12 auto-detected)."""
    name, version = _wheel_or_skip("cudnn", optional_manifest)
    record_note(f"{name}=={version}")
    problem = compare_cudnn(version, torch_cudnn_version())
    assert problem is None, f"{problem} (wheel {name}=={version})"


def test_torch_nccl_matches_wheel(optional_manifest: Manifest | None, record_note: RecordNote) -> None:
    """Fails when torch's cuDNN/NCCL differ from the nvidia-* wheel (from the manifest's `wheels`, else
    nvidia-cudnn/nccl-cu13/cu12 auto-detected)."""
    name, version = _wheel_or_skip("nccl", optional_manifest)
    record_note(f"{name}=={version}")
    problem = compare_nccl(version, torch_nccl_version())
    assert problem is None, f"{problem} (wheel {name}=={version})"


def test_pip_check_is_clean() -> None:
    """Fails when `python -m pip check` reports conflicts (skips without pip)."""
    if importlib.util.find_spec("pip") is None:
        pytest.skip(f"pip is not installed in {sys.prefix}")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert result.returncode == 0, (
        f"`{sys.executable} -m pip check` reports broken requirements; fix the pins:\n{result.stdout}{result.stderr}"
    )
