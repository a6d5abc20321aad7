"""Source facts for the OCI labels: the git revision and a reproducible creation time."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from pytorch_cuda.matrix.labels import BuildFacts


def _git(root: Path, *args: str) -> str | None:
    try:
        result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def build_facts(root: Path) -> BuildFacts:
    """Revision of HEAD (``-dirty`` when the tree has changes) and its commit time.

    The commit time, not the wall clock, is the creation time, so a rebuild of the
    same commit with a warm cache gives the very same image ID.
    """
    revision = _git(root, "rev-parse", "HEAD") or "unknown"
    if revision != "unknown" and _git(root, "status", "--porcelain", "--untracked-files=no"):
        revision += "-dirty"
    stamp = _git(root, "log", "-1", "--format=%ct")
    when = datetime.fromtimestamp(int(stamp), tz=UTC) if stamp else datetime(1970, 1, 1, tzinfo=UTC)
    return BuildFacts(revision=revision, created=when.strftime("%Y-%m-%dT%H:%M:%SZ"))
