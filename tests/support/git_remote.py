"""A local git remote for the bot's tests: a bare repository with `main`, and a clone of it, on real git. Commits
carry the identity they are given (the bot's or a person's), as the branch guard reads them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

BOT = "bump@users.noreply.github.com"
REPO_ROOT = Path(__file__).resolve().parents[2]


def git(cwd: Path, *argv: str, email: str = BOT) -> str:
    env = {
        "GIT_AUTHOR_NAME": "x",
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": "x",
        "GIT_COMMITTER_EMAIL": email,
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(["git", *argv], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit(clone: Path, name: str, email: str = BOT, text: str | None = None) -> str:
    (clone / name).write_text(name if text is None else text, encoding="utf-8")
    git(clone, "add", name, email=email)
    git(clone, "commit", "-qm", f"add {name}", email=email)
    return git(clone, "rev-parse", "HEAD")


def bare_remote(tmp_path: Path) -> tuple[Path, Path]:
    """(a bare remote whose main has one commit, a clone of it on main)."""
    remote, clone = tmp_path / "remote.git", tmp_path / "clone"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    git(clone, "switch", "-qc", "main")
    commit(clone, "base")
    git(clone, "push", "-q", "origin", "main")
    return remote, clone


def human_pushes(tmp_path: Path, remote: Path, branch: str, name: str, email: str = "dev@example.org") -> str:
    """Someone else clones `branch`, commits `name` on it and pushes; their commit."""
    human = tmp_path / f"human-{name}"
    git(tmp_path, "clone", "-q", "-b", branch, str(remote), str(human))
    theirs = commit(human, name, email=email)
    git(human, "push", "-q", "origin", branch)
    return theirs


def matrix_checkout(tmp_path: Path) -> Path:
    """A git checkout (one commit on main) of this repository's matrix.yaml, templates/ and images/: what bake and
    bump read."""
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copy(REPO_ROOT / "matrix.yaml", root)
    for folder in ("templates", "images"):
        shutil.copytree(REPO_ROOT / folder, root / folder)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root
