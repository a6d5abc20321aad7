"""Small synthetic source trees for the repository-rule tests: each rule shown catching an offender it was not
written for, in a folder of the test's own."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write_tree(root: Path, files: Mapping[str, str]) -> None:
    """Write each `relative path: text` under `root`, making the folders."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
