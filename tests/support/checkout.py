"""A scratch checkout of the repository as it is, to build a changed copy of it on the same engine."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_GIT_IDENTITY = ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL")
_IDENTITY = dict.fromkeys(_GIT_IDENTITY, "pytorch-cuda tests")


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    found = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True)
    return found.stdout.strip()


def working_tree_revision(root: Path) -> str:
    """HEAD where the working tree is clean (CI tests a clean clone); else a commit of the working tree as it is,
    new files included and ignored ones not, made through a temporary index: no branch, index or file changes.
    So the scratch copy builds what the rest of the integration tests build."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, **_IDENTITY, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(root, "read-tree", "HEAD", env=env)
        _git(root, "add", "--all", env=env)
        tree = _git(root, "write-tree", env=env)
        if tree == _git(root, "rev-parse", "HEAD^{tree}"):
            return "HEAD"
        return _git(root, "commit-tree", tree, "-p", "HEAD", "-m", "working tree, for a scratch checkout", env=env)


@contextmanager
def scratch_checkout(root: Path, where: Path) -> Iterator[Path]:
    """`git worktree add --detach` of the working tree's revision at `where`, removed on the way out."""
    _git(root, "worktree", "add", "--detach", str(where), working_tree_revision(root))
    try:
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=root, capture_output=True)
        shutil.rmtree(where, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=root, capture_output=True)
