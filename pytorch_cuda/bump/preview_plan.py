"""`build.py bump --dry-run`: the lock changes the real bump makes, without writing them. The plan is applied
(apply_plan: the same rewrite, render and re-lock, on the same indexes with the same release-age gate) to a scratch
copy of matrix.yaml, templates/ and images/; what its locks came to is read back as the lock changes and a unified
diff of every lock, and the copy is removed. The checkout is not written."""

from __future__ import annotations

import difflib
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.bump.apply_plan import apply_plan
from pytorch_cuda.bump.bump_plan import BumpPlan
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.writing import LockChange
from pytorch_cuda.matrix.build_matrix import Matrix

COPIED = ("templates", "images")  # what apply_plan reads and writes under the root, besides matrix.yaml


@dataclass(frozen=True)
class LockPreview:
    """What the real bump would do to the locks: each lock's version moves, and the whole as a unified diff
    (paths relative to the root, as `git diff` shows them)."""

    changes: tuple[LockChange, ...]
    diff: str


def preview_plan(  # noqa: PLR0917 - apply_plan's arguments, as the real bump passes them
    plan: BumpPlan,
    matrix: Matrix,
    matrix_path: Path,
    root: Path,
    targets: Sequence[str],
    ca: Path | None,
    *,
    ignore_release_age: bool = False,
) -> LockPreview:
    """apply_plan on a scratch copy of the checkout; a lock that fails is the same UserError the real bump
    raises (its cause saying the dry run wrote nothing)."""
    with tempfile.TemporaryDirectory(prefix="bump-dry-run-") as scratch:
        copy = Path(scratch)
        for folder in COPIED:
            if (root / folder).is_dir():
                shutil.copytree(root / folder, copy / folder, symlinks=True)
        shutil.copy2(matrix_path, copy / "matrix.yaml")
        try:
            changes = apply_plan(
                plan, matrix, copy / "matrix.yaml", copy, targets, ca, ignore_release_age=ignore_release_age
            )
        except UserError as error:
            cause = error.cause.replace("are put back as they were", "are untouched (a dry run writes nothing)")
            raise type(error)(cause=cause, fix=error.fix) from error
        return LockPreview(tuple(changes), lock_diff(root, copy))


def lock_diff(before: Path, after: Path) -> str:
    """A unified diff of every lock under images/ (added, changed or removed) from `before` to `after`."""
    locks = {p.relative_to(root) for root in (before, after) for p in (root / "images").rglob("*.lock")}
    parts: list[str] = []
    for relative in sorted(locks):
        old, new = _lines(before / relative), _lines(after / relative)
        if old != new:
            name = relative.as_posix()
            parts.extend(difflib.unified_diff(old, new, f"a/{name}", f"b/{name}"))
    return "".join(parts)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True) if path.is_file() else []
