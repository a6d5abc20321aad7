"""`build.py bump` without --dry-run: the plan written into the checkout, all or nothing. matrix.yaml rewritten,
images/ re-rendered, the selected targets' locks re-resolved on their indexes (parent, then child flavours; uv told
to --refresh its cached pages), the locks' layer slices rendered; where any step fails, matrix.yaml and images/ are
put back as they were. `audit --fix` re-locks the same way (relock_roots)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from pytorch_cuda.bump.bump_plan import BumpPlan
from pytorch_cuda.bump.bump_policy import matrix_lock_cutoff
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.child_flavour import own_lock_path
from pytorch_cuda.locks.resolving import refresh_locks
from pytorch_cuda.locks.writing import LockChange, Resolver, run_uv
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.image_folders import images_dir
from pytorch_cuda.matrix.variants import Variant, all_variants
from pytorch_cuda.network.index_probe import index_probe
from pytorch_cuda.render import render_all, write_rendered


def apply_plan(  # noqa: PLR0917 - the plan, where it goes and how it locks
    plan: BumpPlan,
    matrix: Matrix,
    matrix_path: Path,
    root: Path,
    targets: Sequence[str],
    ca: Path | None,
    *,
    ignore_release_age: bool = False,
) -> list[LockChange]:
    """Rewrite matrix.yaml (`matrix`: as it was read), re-render and re-lock the `targets`' locked variants; what
    the locks changed. A UserError on the way puts matrix.yaml and images/ back and says so."""
    before = _snapshot(matrix_path, root)
    try:
        gate = matrix_lock_cutoff(matrix, ca, ignore=ignore_release_age)
        return _write(plan, matrix_path, root, targets, Resolver(ca, index_probe(ca), refreshing_uv, gate))
    except UserError as error:
        _restore(before, root)
        raise type(error)(
            cause=f"{error.cause}; matrix.yaml and images/ are put back as they were", fix=error.fix
        ) from error


def relock_roots(matrix: Matrix, root: Path, roots: Sequence[Variant], resolver: Resolver) -> list[LockChange]:
    """images/ rendered from `matrix`, the `roots`' locks (and their child flavours') re-resolved, then the locks'
    layer slices rendered; the first lock that failed is raised."""
    write_rendered(render_all(matrix, root / "templates"), root)
    changes: list[LockChange] = []
    if roots:
        changes, failures = refresh_locks(matrix, list(roots), root, resolver)
        if failures:
            raise failures[0]
    write_rendered(render_all(matrix, root / "templates", root), root)  # the locks' layer slices
    return changes


def refreshing_uv(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """uv, told to refresh its cached index pages: the versions just found may be newer than them."""
    return run_uv([*argv, "--refresh"], env)


def _write(plan: BumpPlan, path: Path, root: Path, targets: Sequence[str], resolver: Resolver) -> list[LockChange]:
    """Rewrite matrix.yaml, render, re-lock the selected targets' locked variants (parent, then children)."""
    path.write_text(plan.rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    matrix = load_matrix(path)
    locked = [v for v in all_variants(matrix) if v.target_name in targets and own_lock_path(root, v).exists()]
    roots = [v for v in locked if v.flavour.parent is None] if plan.moved else []
    return relock_roots(matrix, root, roots, resolver)


def _snapshot(matrix_path: Path, root: Path) -> dict[Path, bytes]:
    files = [matrix_path, *(p for p in images_dir(root).rglob("*") if p.is_file())]
    return {path: path.read_bytes() for path in files}


def _restore(snapshot: dict[Path, bytes], root: Path) -> None:
    """Put matrix.yaml and images/ back as they were before a bump that failed half-way."""
    for path in (p for p in images_dir(root).rglob("*") if p.is_file() and p not in snapshot):
        path.unlink()
    for path, data in snapshot.items():
        path.parent.mkdir(parents=True, exist_ok=True)  # a variant folder the render removed (not in matrix.yaml)
        path.write_bytes(data)
