"""The suite's digest: one sha256 over the suite folder's file names and contents (caches and bytecode left out).

One definition for every reader: a results file records it (``suite_digest``), the in-build check memo and the GPU
job's content hash key on it. Standard library only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def suite_tree_digest(suite_dir: Path) -> str:
    """sha256 (hex) over the files under `suite_dir`, in name order; __pycache__ and .pyc files are left out."""
    digest = hashlib.sha256()
    for path in sorted(suite_dir.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            digest.update(str(path.relative_to(suite_dir)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
