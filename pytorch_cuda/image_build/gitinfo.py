"""Source facts for the OCI labels: the git revision and a reproducible creation time."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from pytorch_cuda.matrix.labels import BuildFacts, given_source_date_epoch


def _git(root: Path, *args: str) -> str | None:
    try:
        result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def build_facts(root: Path, environ: Mapping[str, str] | None = None) -> BuildFacts:
    """Revision of HEAD (``-dirty`` when the tree has changes) and its commit time.

    The commit time, not the wall clock, is the image's creation time (its config, the created label), so two
    builds of the same commit give the very same image ID (the files' time is matrix.yaml's source_date_epoch).
    $SOURCE_DATE_EPOCH, where set (the reproducible-builds convention: a release tarball without git), wins
    over the commit time.
    """
    revision = _git(root, "rev-parse", "HEAD") or "unknown"
    if revision != "unknown" and _git(root, "status", "--porcelain", "--untracked-files=no"):
        revision += "-dirty"
    given = given_source_date_epoch(os.environ if environ is None else environ)
    stamp = _git(root, "log", "-1", "--format=%ct") if given is None else str(given)
    epoch = int(stamp) if stamp else 0
    when = datetime.fromtimestamp(epoch, tz=UTC)
    return BuildFacts(revision=revision, created=when.strftime("%Y-%m-%dT%H:%M:%SZ"), created_epoch=epoch)
