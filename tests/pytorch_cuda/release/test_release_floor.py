"""Issue 51: the rollback floor is recorded after each release and each daily refresh (release.yml's record-floor
job: `build.py release record-floor` on a fresh runner, then the bot's pull request), rises and never falls, and a
fresh CI runner and a fresh verifier enforce the recorded floor. On the loopback registry, the split keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import local_registry as registry
from tests.support.release_checkout import Checkout, folded, fresh, make_checkout, refresh, released, skopeo_copy
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration


def _floor(checkout: Checkout) -> tuple[int, int]:
    written = json.loads((checkout.folder / "keys" / "release-index-floor.json").read_text())
    return written["targets_version"], written["snapshot_version"]


def _record(checkout: Checkout, tmp_path: Path, runner: str) -> tuple[int, str]:
    """release.yml's record-floor job: a fresh runner, the checkout's committed floor."""
    done = fresh(checkout, tmp_path, runner).release("record-floor")
    return done.returncode, folded(done.stderr) or done.stdout


def test_the_floor_rises_after_each_release_and_refresh_and_never_falls(tmp_path: Path) -> None:
    split = make_checkout(tmp_path / "checkout", unique_repository(), split=True)
    released(split, "a" * 40, "v9.9")
    first_index = registry.manifest(split.path, "release-index").digest
    assert _record(split, tmp_path, "after-release-1")[0] == 0
    assert _floor(split) == (1, 1)
    released(split, "b" * 40, "v9.9")  # the second release's floor is not recorded yet
    assert refresh(fresh(split, tmp_path, "daily-1"))[0] == 0  # the daily refresh on a fresh runner
    status, said = _record(split, tmp_path, "after-refresh-1")
    assert status == 0, said
    assert "targets v2, snapshot v2; commit it" in said  # the refresh day raised the floor to the last release's
    assert _floor(split) == (2, 2)
    assert refresh(fresh(split, tmp_path, "daily-2"))[0] == 0
    assert _record(split, tmp_path, "after-refresh-2")[0] == 0  # nothing new: the floor stays where it was
    assert _floor(split) == (2, 2)
    # a registry writer puts the first index back: the next refresh (a fresh runner) and its record-floor refuse it,
    # the floor does not fall, and a fresh verifier refuses the old index
    skopeo_copy(f"{split.repository}@{first_index}", f"{split.repository}:release-index")
    status, said = refresh(fresh(split, tmp_path, "daily-3"))
    assert status == 1, said
    assert "release-index targets.version: expected at least 2 (release-index-floor.json, committed), found 1" in said
    status, said = _record(split, tmp_path, "after-refresh-3")
    assert status == 1, said
    assert "record-floor refused the release index: release-index targets.version: expected at least 2" in said
    assert _floor(split) == (2, 2)
    verified = fresh(split, tmp_path, "user").release("verify", f"{split.repository}:v9.9")
    assert verified.returncode == 1
    assert "expected at least 2 (release-index-floor.json, committed), found 1" in folded(verified.stderr)
