"""`pip install .` gives every package the entry point imports, and `pytorch-cuda-build` works from any folder.

The wheel is built offline from a copy of the packaged files (`pip wheel --no-deps --no-build-isolation`)
and installed without its dependencies into a fresh venv outside the checkout; the venv borrows this
venv's third-party packages through a path file (a plain path, so this venv's editable install of the
checkout stays out). Every module must then come from the wheel, and the command must find the
repository from the working directory upward, or from --root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.version import Version

PACKAGED = (
    "pyproject.toml",
    "README.md",
    "pytorch_cuda",
    "pytorch_cuda_contract",
    "pytorch_cuda_entry",
    "pytorch_cuda_sbom",
)
PACKAGED_SUITE = ("conformance", "precision_check")
IMPORTED = (
    "pytorch_cuda.cli",
    "pytorch_cuda_contract.results_file",
    "pytorch_cuda_contract.precision_check_file",
    "pytorch_cuda_entry.banner",
)
BACKEND = Version("77")  # pyproject.toml's [build-system] requires setuptools>=77


def _run(argv: list[str], cwd: Path, *, isolated: bool = True) -> subprocess.CompletedProcess[str]:
    """argv in cwd; isolated: without PYTHONPATH, so that nothing of the checkout can be imported."""
    env = {k: v for k, v in os.environ.items() if not isolated or k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv's bin/ folder, with the wheel of this checkout installed."""
    backend = version("setuptools")
    if Version(backend) < BACKEND:
        pytest.skip(
            f"setuptools {backend} in this venv predates the build backend the wheel needs "
            "(>= 77): run scripts/setup-python.sh, which installs the pinned one"
        )
    root = Path(__file__).resolve().parents[2]
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "examples", "*.egg-info")
    for name in (*PACKAGED, *PACKAGED_SUITE):
        if (root / name).is_dir():
            shutil.copytree(root / name, source / name, ignore=ignore)
        else:
            shutil.copy2(root / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    built = _run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"), str(source)],
        work,
        isolated=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel = next((work / "dist").glob("pytorch_cuda-*.whl"))
    venv.EnvBuilder(with_pip=False).create(work / "venv")
    python = work / "venv" / "bin" / "python"
    added = _run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)], work)
    assert added.returncode == 0, added.stdout[-3000:] + added.stderr[-3000:]
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work).stdout.strip()
    (Path(site) / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return work / "venv" / "bin"


def test_every_imported_package_comes_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    code = f"import importlib, json; print(json.dumps([importlib.import_module(m).__file__ for m in {IMPORTED!r}]))"
    found = _run([str(installed / "python"), "-c", code], tmp_path)
    assert found.returncode == 0, found.stderr
    for path in json.loads(found.stdout):
        assert Path(path).is_relative_to(installed.parent), path


def test_the_wheel_carries_neither_the_suite_nor_precision_check(installed: Path, tmp_path: Path) -> None:
    """The builder never imports them (tests/repo/test_import_rules.py); the images COPY them from the checkout."""
    for package in PACKAGED_SUITE:
        found = _run([str(installed / "python"), "-c", f"import {package}"], tmp_path)
        assert found.returncode == 1, found.stdout
        assert f"No module named '{package}'" in found.stderr


def test_the_command_works_from_any_folder(installed: Path, tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    command = str(installed / "pytorch-cuda-build")
    helped = _run([command, "--help"], tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert "usage: pytorch-cuda-build" in helped.stdout
    outside = _run([command, "list", "--json"], tmp_path)
    assert outside.returncode == 2
    assert "is not inside a pytorch-cuda repository" in " ".join(outside.stderr.split())
    assert "--root" in outside.stderr
    given = _run([command, "list", "--json", "--root", str(root)], tmp_path)
    assert given.returncode == 0, given.stderr
    assert any(row["variant"] == "cu128-runtime" for row in json.loads(given.stdout))
    below = _run([command, "render", "--check"], root / "docs")
    assert below.returncode == 0, below.stdout + below.stderr


def test_the_report_runs_from_the_wheel_with_its_templates(installed: Path, tmp_path: Path) -> None:
    results = Path(__file__).resolve().parents[2] / "evidence/reports/h200/results.json"
    written = _run([str(installed / "pytorch-cuda-build"), "report", str(results), "--out", "out"], tmp_path)
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "out" / "report.html").stat().st_size > 10_000
