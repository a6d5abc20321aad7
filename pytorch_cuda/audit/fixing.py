"""`build.py audit --fix`: move what a published fix allows, skipping bump's release-age gate. A pin of
matrix.yaml (python_packages, a flavour's python_packages) moves to the lowest fixed version above it; the
images' locks are then re-resolved on their indexes (uv --refresh: a transitive package gets its newest release,
so its fix too); a host-tool lock (requirements/) is re-locked with `uv lock --upgrade-package NAME`."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from pytorch_cuda.audit.findings import Finding
from pytorch_cuda.bump.apply_plan import refreshing_uv, relock_roots
from pytorch_cuda.bump.matrix_edit import set_scalar
from pytorch_cuda.errors import EngineError
from pytorch_cuda.locks.child_flavour import own_lock_path
from pytorch_cuda.locks.writing import LockChange, Resolver, find_uv
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.variants import all_variants
from pytorch_cuda.network.index_probe import index_probe


@dataclass(frozen=True)
class PinMove:
    pin: str  # the matrix.yaml key path, dotted
    package: str
    old: str
    new: str
    advisory: str


@dataclass(frozen=True)
class FixReport:
    """What `audit --fix` did: the pins it moved, what the locks changed, and notes (a host tool upgraded, the
    Debian findings that only a rebuild takes)."""

    moves: tuple[PinMove, ...]
    changes: tuple[LockChange, ...]
    notes: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "pins": [
                {"pin": m.pin, "package": m.package, "old": m.old, "new": m.new, "advisory": m.advisory}
                for m in self.moves
            ],
            "locks": [{"lock": str(c.path), "changes": list(c.changes)} for c in self.changes],
            "notes": list(self.notes),
        }


def lowest_fix(finding: Finding) -> str | None:
    above = sorted(Version(v) for v in finding.fix_versions if Version(v) > Version(finding.version))
    return str(above[0]) if above else None


def pin_moves(matrix: Matrix, findings: Sequence[Finding]) -> list[PinMove]:
    """The matrix.yaml pins that a Python finding's fix moves (a pin the finding's version is)."""
    pins: dict[tuple[str, ...], object] = {
        ("python_packages", name): version for name, version in matrix.python_packages.items()
    }
    for flavour_name, flavour in matrix.flavours.items():
        pins |= {("flavours", flavour_name, "python_packages", n): v for n, v in flavour.python_packages.items()}
    moves = []
    for finding in (f for f in findings if f.ecosystem == "pypi"):
        new = lowest_fix(finding)
        for path, version in pins.items():
            if new and path[-1] == finding.package and Version(str(version)) == Version(finding.version):
                moves.append(PinMove(".".join(path), finding.package, finding.version, new, finding.ids[0]))
    return moves


def apply_fixes(
    matrix_path: Path, root: Path, findings: Sequence[Finding], ca: Path | None, log: Callable[[str], None]
) -> tuple[list[PinMove], list[LockChange], list[str]]:
    """Rewrite matrix.yaml, re-render, re-lock the images' locks, re-lock the host tools a finding names."""
    matrix = load_matrix(matrix_path)
    moves = pin_moves(matrix, findings)
    text = matrix_path.read_text(encoding="utf-8")
    for move in moves:
        log(f"fix: {move.pin} {move.old} -> {move.new} ({move.advisory})")
        text = set_scalar(text, tuple(move.pin.split(".")), move.new)
    matrix_path.write_text(text, encoding="utf-8")
    matrix = load_matrix(matrix_path)
    image_fixes = [f for f in findings if f.ecosystem == "pypi" and any(lock.startswith("images/") for lock in f.locks)]
    changes: list[LockChange] = []
    if image_fixes:
        roots = [v for v in all_variants(matrix) if v.flavour.parent is None and own_lock_path(root, v).exists()]
        log("fix: re-locking " + ", ".join(v.key for v in roots))
        changes = relock_roots(matrix, root, roots, Resolver(ca, probe=index_probe(ca), run=refreshing_uv))
    host = sorted(
        {
            f.package
            for f in findings
            if f.ecosystem == "pypi" and any(lock.startswith("requirements/") for lock in f.locks)
        }
    )
    if host:
        _relock_host_tools(root, host, log)
    return moves, changes, [f"requirements/: {name} upgraded by uv lock" for name in host]


def fix_findings(
    matrix_path: Path, root: Path, findings: Sequence[Finding], ca: Path | None, log: Callable[[str], None]
) -> FixReport:
    """Apply the fixes the findings allow (a Python finding with a fixed version); name the Debian ones, which a
    rebuild from a fresh base takes."""
    fixable = [f for f in findings if f.action == "pull-request" and f.ecosystem == "pypi"]
    moves, changes, notes = apply_fixes(matrix_path, root, fixable, ca, log)
    debian = list(dict.fromkeys(f.package for f in findings if f.ecosystem == "deb"))  # one finding per CVE
    if debian:
        notes.append(
            f"Debian -security has newer {', '.join(debian)}: a rebuild from a fresh base takes them "
            "(the bump workflow, dispatched by the security lane)"
        )
    return FixReport(tuple(moves), tuple(changes), tuple(notes))


def _relock_host_tools(root: Path, packages: list[str], log: Callable[[str], None]) -> None:
    log("fix: uv lock --upgrade-package " + " ".join(packages) + ", then scripts/lock-host-tools.sh")
    upgrade = [arg for name in packages for arg in ("--upgrade-package", name)]
    for argv in ([find_uv(), "lock", *upgrade], [str(root / "scripts" / "lock-host-tools.sh")]):
        done = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False, timeout=600)
        if done.returncode != 0:
            raise EngineError(
                cause=f"{' '.join(argv[:3])} failed (exit {done.returncode}): {done.stderr.strip()[-400:]}",
                fix="re-lock the host tools by hand (scripts/lock-host-tools.sh) and read uv's message",
            )
