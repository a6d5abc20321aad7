"""`build.py bump` with nothing on the network, for unit tests: the package indexes in memory
(tests/support/bump_indexes.py), no base image or Debian archive to move, no PyPI project pages, and the re-lock
faked (tests/support/offline_relock.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytorch_cuda.bump import bump_flow, debian_archive
from pytorch_cuda.package_index.simple_index import IndexFile
from tests.support.bump_indexes import cu130_down, pins
from tests.support.offline_relock import no_lock_moves


def bump_offline(
    monkeypatch: pytest.MonkeyPatch, files: Callable[[str, str], list[IndexFile]] = cu130_down
) -> list[list[str]]:
    """Point bump at `files` (index, name -> the files listed) and torch's pins; what was asked to re-lock."""
    monkeypatch.setattr(bump_flow, "network_sources", lambda ca: (files, pins))
    monkeypatch.setattr(bump_flow, "plan_bases", lambda matrix, policy, resolve: ([], []))
    monkeypatch.setattr(bump_flow, "pypi_project_urls", lambda ca: lambda name: {})
    monkeypatch.setattr(debian_archive, "check_archive", lambda *_: [])
    return no_lock_moves(monkeypatch)
