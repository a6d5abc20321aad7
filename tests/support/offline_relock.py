"""The re-lock of a bump faked at the locks room's door, for unit tests that plan on in-memory indexes: uv cannot
lock versions that exist only in the test, so refresh_locks answers that no lock moved (and the release-age gate is
none). `bump --dry-run` re-locks in a scratch copy (bump/preview_plan.py), as the real bump does; the real uv runs
in tests/pytorch_cuda/bump/test_bump_loopback.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda.bump import apply_plan
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.writing import LockChange, Resolver
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.variants import Variant


def no_lock_moves(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Fake the re-lock; what it was asked to re-lock (the root variants' keys), one list per call."""
    asked: list[list[str]] = []

    def refresh(
        matrix: Matrix, roots: list[Variant], where: Path, resolver: Resolver
    ) -> tuple[list[LockChange], list[UserError]]:
        asked.append([v.key for v in roots])
        return [], []

    monkeypatch.setattr(apply_plan, "refresh_locks", refresh)
    monkeypatch.setattr(apply_plan, "matrix_lock_cutoff", lambda matrix, ca, ignore: lambda index: None)
    return asked
