"""Lock maintenance covers the build-stage tools' locks too (images/installer.lock, images/sbom-tool.lock), against
the real PyPI with matrix.yaml's release-age gate: `lock --upgrade` re-resolves them (before: a tool lock was
resolved only when missing or pinning another tool version, so its dependencies never moved), the tool's own pin
stays the builder's, and no dependency goes below its committed version. A plain `lock` leaves them alone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytorch_cuda.bump.bump_policy import matrix_lock_cutoff
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.file_format import PYPI_INDEX, SBOM_TOOL, SBOM_TOOL_LOCK, SBOM_TOOL_VERSION, parse_lock
from pytorch_cuda.locks.forward_only import downgrades
from pytorch_cuda.locks.resolving import refresh_tool_lock, tool_lock_problem
from pytorch_cuda.locks.writing import Resolver, run_uv
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.network.index_probe import probe_index

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]


def test_lock_maintenance_re_resolves_the_sbom_tool_lock_forward_only(tmp_path: Path) -> None:
    try:
        probe_index(PYPI_INDEX, None)
    except UserError as error:
        pytest.skip(f"PyPI is unreachable here: {error.cause}")
    (tmp_path / "images").mkdir()
    shutil.copyfile(ROOT / SBOM_TOOL_LOCK, tmp_path / SBOM_TOOL_LOCK)
    committed = parse_lock((tmp_path / SBOM_TOOL_LOCK).read_text()).versions()
    ran: list[list[str]] = []

    def uv(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        return run_uv(argv, env)

    matrix = load_matrix(ROOT / "matrix.yaml")
    resolver = Resolver(None, probe=lambda index: None, run=uv, cutoff=matrix_lock_cutoff(matrix, None))
    python = matrix.bases[matrix.default_base].python
    kept = refresh_tool_lock(tmp_path, SBOM_TOOL_LOCK, resolver, python=python)
    assert (kept.changes, ran) == ((), [])  # keep: its tool version is the builder's, nothing to resolve
    change = refresh_tool_lock(tmp_path, SBOM_TOOL_LOCK, resolver, python=python, upgrade=True)
    assert ran, "lock maintenance did not resolve the tool lock"
    assert "--exclude-newer" in ran[0]  # PyPI serves upload times: the gate holds the tool's dependencies
    assert f"--exclude-newer-package={SBOM_TOOL}=" in " ".join(ran[0])  # but not the builder's own pin
    after = parse_lock((tmp_path / SBOM_TOOL_LOCK).read_text()).versions()
    assert after[SBOM_TOOL] == SBOM_TOOL_VERSION
    assert downgrades(committed, after, {}) == {}
    assert tool_lock_problem(tmp_path, SBOM_TOOL_LOCK) is None
    print(f"{SBOM_TOOL_LOCK}: {len(after)} pins, moved {list(change.changes)}, held {list(change.held)}")
