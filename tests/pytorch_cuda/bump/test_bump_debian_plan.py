"""The Debian side of a bump plan (bump/debian_plan.py): a base with no committed record gets a note and no archive
call; a recorded base is checked against the archive, its updates go into the plan, or a note says none is newer."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda.bump import debian_archive, debian_plan
from pytorch_cuda.bump.bump_plan import BumpPlan
from pytorch_cuda.bump.debian_archive import DebianUpdate
from pytorch_cuda.matrix.build_matrix import Matrix


def test_a_base_without_a_record_is_a_note_and_no_archive_call(
    matrix: Matrix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(debian_archive, "check_archive", lambda *_: pytest.fail("the archive was asked"))
    plan = debian_plan.with_debian(BumpPlan(()), ["before"], matrix, tmp_path, None, lambda _: None)
    assert plan.notes[0] == "before"
    assert "base trixie: no Debian package record (images/debian-trixie.lock)" in plan.notes[1]
    assert plan.debian == ()


def test_a_recorded_base_is_checked_against_the_archive(
    matrix: Matrix, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    newer = DebianUpdate("libc6", "2.41-12", "2.41-12+deb13u1", "trixie-security", security=True)
    logged: list[str] = []
    monkeypatch.setattr(debian_archive, "check_archive", lambda *_: [newer])
    plan = debian_plan.with_debian(BumpPlan(()), [], matrix, root, None, logged.append)
    assert len(logged) == 1
    assert logged[0].startswith("base trixie: ")
    assert logged[0].endswith(f" Debian packages against {matrix.bases['trixie'].bootstrap.mirror}")
    assert plan.debian == (newer,)
    assert plan.notes == ()
    monkeypatch.setattr(debian_archive, "check_archive", lambda *_: [])
    plan = debian_plan.with_debian(BumpPlan(()), [], matrix, root, None, lambda _: None)
    assert plan.debian == ()
    assert "Debian packages of images/debian-trixie.lock are the newest in" in plan.notes[0]
