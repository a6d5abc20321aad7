"""Lock maintenance on a package index served on 127.0.0.1 with PEP 691 JSON and PEP 700 upload times: `build.py
lock --upgrade` re-resolves every lock while every direct pin is current, so a stale transitive pin moves, but never
to a release younger than `policy: min_release_age` (uv's --exclude-newer, for transitive pins too); with
--ignore-release-age it does. A plain `lock` leaves a lock with unchanged inputs as it is. A locked release younger
than the gate is never moved back (soupsieve 4.1.4 -> 4.1.3 was), and a pin bump moves only the locks that hold the
pin, and in them only what the pin needs (a pytest bump carried five unrelated moves). The real uv, no Docker."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.locks.file_format import parse_lock
from tests.support.bump_checkout import FIRST, bump, checkout
from tests.support.loopback_debian import LoopbackArchive
from tests.support.loopback_index import LoopbackIndex, Release

pytestmark = pytest.mark.integration


def _days_ago(days: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pins(root: Path) -> dict[str, str]:
    return parse_lock((root / "images/cu128-runtime/requirements.lock").read_text()).versions()


def test_lock_maintenance_moves_a_stale_transitive_pin_within_the_age_gate(
    tmp_path: Path, debian_archive: LoopbackArchive, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _days_ago(60)
    first = [replace(r, uploaded=old) for r in FIRST if r.name != "pytest"]
    first += [Release("pytest", "9.2.0", ("pluggy>=1.5",), uploaded=old), Release("pluggy", "1.5.0", uploaded=old)]
    index = LoopbackIndex(tmp_path / "index", pep691=True)
    index.publish(*first)
    index.start()
    try:
        root = checkout(tmp_path / "repo", index.url, debian_archive.mirror)
        assert main(["lock", "--root", str(root), "--target", "cu12"]) == 0
        assert _pins(root)["pluggy"] == "1.5.0"
        # pluggy (no pin of matrix.yaml: pytest's dependency) has a month-old and a day-old release
        index.publish(
            Release("pluggy", "1.6.0", uploaded=_days_ago(30)), Release("pluggy", "1.7.0", uploaded=_days_ago(1))
        )
        capsys.readouterr()
        assert main(["lock", "--root", str(root), "--target", "cu12"]) == 0  # keep: the inputs are as locked
        assert "images/cu128-runtime/requirements.lock: unchanged" in capsys.readouterr().out
        assert _pins(root)["pluggy"] == "1.5.0"
        assert main(["lock", "--root", str(root), "--target", "cu12", "--upgrade"]) == 0
        assert "pluggy 1.5.0 -> 1.6.0" in capsys.readouterr().out  # moved, but not to the day-old 1.7.0
        pins = _pins(root)
        assert (pins["pluggy"], pins["pytest"], pins["numpy"]) == ("1.6.0", "9.2.0", "2.5.5")  # direct pins stay
        assert main(["render", "--check", "--root", str(root)]) == 0  # a maintained lock is a current one
        assert main(["lock", "--root", str(root), "--target", "cu12", "--upgrade", "--ignore-release-age"]) == 0
        assert _pins(root)["pluggy"] == "1.7.0"  # the gate, and only the gate, held it
    finally:
        index.stop()


def _index(tmp_path: Path) -> LoopbackIndex:
    old = _days_ago(60)
    first = [replace(r, uploaded=old) for r in FIRST if r.name != "pytest"]
    first += [Release("pytest", "9.2.0", ("pluggy>=1.5",), uploaded=old), Release("pluggy", "1.5.0", uploaded=old)]
    index = LoopbackIndex(tmp_path / "index", pep691=True)
    index.publish(*first)
    return index


def test_lock_maintenance_never_moves_a_locked_release_back(
    tmp_path: Path, debian_archive: LoopbackArchive, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the committed lock held pluggy 1.7.0 (a day old, locked past the gate), and maintenance moved it back
    to 1.6.0, the newest the gate admits (as soupsieve 4.1.4 -> 4.1.3)."""
    index = _index(tmp_path)
    index.start()
    try:
        root = checkout(tmp_path / "repo", index.url, debian_archive.mirror)
        index.publish(
            Release("pluggy", "1.6.0", uploaded=_days_ago(30)), Release("pluggy", "1.7.0", uploaded=_days_ago(1))
        )
        assert main(["lock", "--root", str(root), "--target", "cu12", "--ignore-release-age"]) == 0
        assert _pins(root)["pluggy"] == "1.7.0"
        capsys.readouterr()
        assert main(["lock", "--root", str(root), "--target", "cu12", "--upgrade", "--json"]) == 0
        (runtime,) = [c for c in json.loads(capsys.readouterr().out) if c["path"].endswith("runtime/requirements.lock")]
        assert runtime["changes"] == []
        assert runtime["held"] == ["pluggy 1.7.0"]  # kept: newer than the gate admits, never moved back
        assert _pins(root)["pluggy"] == "1.7.0"
        assert main(["render", "--check", "--root", str(root)]) == 0
        # a bump that re-resolves this lock (numpy 2.5.5 -> 2.5.6) keeps it too
        index.publish(Release("numpy", "2.5.6", uploaded=_days_ago(20)))
        moved = bump(root, capsys, "--target", "cu12", status=3)["locks"]
        runtime_moves = [lock["changes"] for lock in moved if lock["path"].endswith("runtime/requirements.lock")]
        assert runtime_moves == [["  numpy 2.5.5 -> 2.5.6"]]
        assert _pins(root)["pluggy"] == "1.7.0"
    finally:
        index.stop()


def test_a_pin_bump_moves_only_the_locks_that_hold_the_pin(
    tmp_path: Path, debian_archive: LoopbackArchive, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: bump re-resolved every lock afresh, so the month-old pluggy 1.6.0 rode along with nbclient's bump."""
    index = _index(tmp_path)
    index.start()
    try:
        root = checkout(tmp_path / "repo", index.url, debian_archive.mirror)
        assert main(["lock", "--root", str(root), "--target", "cu12"]) == 0
        runtime = root / "images/cu128-runtime/requirements.lock"
        before = runtime.read_bytes()
        # a newer nbclient (the jupyter flavour's pin) and a newer pluggy (pytest's dependency), both old enough
        index.publish(
            Release("nbclient", "0.11.1", uploaded=_days_ago(20)), Release("pluggy", "1.6.0", uploaded=_days_ago(30))
        )
        result = bump(root, capsys, "--target", "cu12", status=3)
        assert [m["pin"] for m in result["moved"]] == ["flavours.jupyter.python_packages.nbclient"]
        changed = {lock["path"]: lock["changes"] for lock in result["locks"] if lock["changes"]}
        assert changed == {"images/cu128-jupyter/requirements-flavour.lock": ["  nbclient 0.11.0 -> 0.11.1"]}
        assert runtime.read_bytes() == before  # not re-resolved: pluggy stays 1.5.0 there
        assert main(["render", "--check", "--root", str(root)]) == 0
        # a shared pin (numpy, in the runtime's lock) re-resolves the runtime, and moves only numpy in it
        index.publish(Release("numpy", "2.5.6", uploaded=_days_ago(20)))
        result = bump(root, capsys, "--target", "cu12", status=3)
        changed = {lock["path"]: lock["changes"] for lock in result["locks"] if lock["changes"]}
        assert changed == {"images/cu128-runtime/requirements.lock": ["  numpy 2.5.5 -> 2.5.6"]}
        assert _pins(root)["pluggy"] == "1.5.0"
    finally:
        index.stop()
