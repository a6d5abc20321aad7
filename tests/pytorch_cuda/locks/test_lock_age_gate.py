"""The release-age gate of the locks: uv's --exclude-newer, min_release_age days back, on an index that serves
upload times (probed once), none on one that serves none (uv would drop its every file) or with no gate."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

from pytorch_cuda.errors import EngineError
from pytorch_cuda.locks.writing import Resolver
from pytorch_cuda.package_index.release_age import lock_cutoff
from pytorch_cuda.package_index.simple_index import IndexFile

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
DATED, UNDATED, DOWN = "https://pypi.test/simple", "https://html.test/whl", "https://down.test/simple"


def _files(index: str, name: str) -> list[IndexFile]:
    if index == DOWN:
        raise EngineError("cannot read it", "try later")
    uploaded = "2026-01-01T00:00:00Z" if index == DATED else None
    return [IndexFile(f"{name}-1.0-py3-none-any.whl", "u", False, None, True, uploaded)]


def test_the_cutoff_is_for_indexes_with_upload_times() -> None:
    asked: list[str] = []

    def counted(index: str, name: str) -> list[IndexFile]:
        asked.append(index)
        return _files(index, name)

    cutoff = lock_cutoff(7, NOW, counted)
    assert cutoff(DATED) == "2026-11-28T12:00:00Z"
    assert cutoff(DATED) == "2026-11-28T12:00:00Z"
    assert cutoff(UNDATED) is None
    assert cutoff(DOWN) is None
    assert asked == [DATED, UNDATED, DOWN]  # each index probed once
    assert lock_cutoff(0, NOW, _files)(DATED) is None


def test_the_resolver_passes_the_cutoff_to_uv() -> None:
    seen: list[list[str]] = []

    def uv(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    resolver = Resolver(None, lambda index: None, uv, lock_cutoff(7, NOW, _files))
    resolver.compile(["uv", "pip", "compile"], "x", index=DATED)
    resolver.compile(["uv", "pip", "compile"], "x", index=UNDATED)
    assert seen == [["uv", "pip", "compile", "--exclude-newer", "2026-11-28T12:00:00Z"], ["uv", "pip", "compile"]]
