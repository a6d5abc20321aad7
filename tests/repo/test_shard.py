"""The pytest plugin that splits the suite's own tests across containers (scripts/suite-tests-in-image.sh)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.shard import shard_of

ROOT = Path(__file__).resolve().parents[2]


def test_shard_spec() -> None:
    assert shard_of("1/2") == (1, 2)
    assert shard_of("2/2") == (2, 2)


@pytest.mark.parametrize("spec", ["0/2", "3/2", "1", "a/b", "1/0", ""])
def test_bad_shard_spec_is_a_usage_error(spec: str) -> None:
    with pytest.raises(pytest.UsageError, match="expected K/N"):
        shard_of(spec)


def test_shards_cover_every_test_once(tmp_path: Path) -> None:
    (tmp_path / "test_five.py").write_text("\n".join(f"def test_{i}(): pass" for i in range(5)) + "\n")
    seen = []
    for shard in ("1/2", "2/2"):
        listed = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "tests.support.shard",
                "--co",
                "-q",
                "-p",
                "no:cacheprovider",
                str(tmp_path / "test_five.py"),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTEST_SHARD": shard, "PYTHONPATH": str(ROOT)},
        )
        seen += [line.split("::")[1] for line in listed.stdout.splitlines() if "::test_" in line]
    assert sorted(seen) == [f"test_{i}" for i in range(5)]
