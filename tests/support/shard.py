"""A pytest plugin that keeps one shard of the collected tests: `-p tests.support.shard` with PYTEST_SHARD=K/N.

scripts/suite-tests-in-image.sh runs the suite's own tests in N containers side by side, one shard
each (test i goes to shard i mod N, in collection order), so that they use every core. Without
PYTEST_SHARD it keeps every test.
"""

from __future__ import annotations

import os

import pytest


def shard_of(spec: str) -> tuple[int, int]:
    """'1/2' -> (1, 2); shards count from 1."""
    index, sep, count = spec.partition("/")
    if not (sep and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise pytest.UsageError(f"PYTEST_SHARD={spec!r}: expected K/N with 1 <= K <= N, e.g. 1/2")
    return int(index), int(count)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    spec = os.environ.get("PYTEST_SHARD", "")
    if not spec:
        return
    index, count = shard_of(spec)
    kept = [item for position, item in enumerate(items) if position % count == index - 1]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept
