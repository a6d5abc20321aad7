"""Committed data files are stored once: no two tracked files of 64 KiB or more have the same bytes."""

from __future__ import annotations

import hashlib
import subprocess
from collections import defaultdict
from pathlib import Path

LARGE = 64 * 1024


def test_no_large_file_is_committed_twice(root: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True)
    by_digest: dict[str, list[str]] = defaultdict(list)
    for name in filter(None, listed.stdout.split("\0")):
        path = root / name
        if path.is_file() and not path.is_symlink() and path.stat().st_size >= LARGE:
            by_digest[hashlib.sha256(path.read_bytes()).hexdigest()].append(name)
    twins = [names for names in by_digest.values() if len(names) > 1]
    assert not twins, f"the same bytes are committed more than once (keep one, point readers at it): {twins}"
