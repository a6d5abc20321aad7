"""Lock maintenance on a package index served on 127.0.0.1 with PEP 691 JSON and PEP 700 upload times: `build.py
lock` re-resolves every lock while every direct pin is current, so a stale transitive pin moves, but never to a
release younger than `policy: min_release_age` (uv's --exclude-newer, for transitive pins too); with
--ignore-release-age it does. The real uv, no Docker."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.locks.file_format import parse_lock
from tests.support.bump_checkout import FIRST, checkout
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
        assert main(["lock", "--root", str(root), "--target", "cu12"]) == 0
        assert "pluggy 1.5.0 -> 1.6.0" in capsys.readouterr().out  # moved, but not to the day-old 1.7.0
        pins = _pins(root)
        assert (pins["pluggy"], pins["pytest"], pins["numpy"]) == ("1.6.0", "9.2.0", "2.5.5")  # direct pins stay
        assert main(["render", "--check", "--root", str(root)]) == 0  # a maintained lock is a current one
        assert main(["lock", "--root", str(root), "--target", "cu12", "--ignore-release-age"]) == 0
        assert _pins(root)["pluggy"] == "1.7.0"  # the gate, and only the gate, held it
    finally:
        index.stop()
