"""A committed file that no longer matches what the builder would write: `render --check` and `lock --check`
report these (the rendered images/, matrix.schema.json, the hash locks).

A floor below both the renderer and the locks, so that each can name a stale file without importing the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StaleFile:
    path: Path  # relative to the repository root
    reason: str  # "missing", "differs from the templates", ...; what to run, where it says so
    diff: str  # a unified diff of the committed file against the rendered one, or ""
