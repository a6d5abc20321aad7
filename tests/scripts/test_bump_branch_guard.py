"""scripts/push-bot-branch.sh on real git repositories: the bot's branch is created, replaced while only the bot
pushed to it (or a person pressed "Update branch"), and left alone (exit 3, the other commits listed) once someone
else pushed work of their own, as Renovate does; --check answers the same question and pushes nothing (bump.yml
closes an overtaken group's pull request only when it answers 0)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "push-bot-branch.sh"
BOT = "bump@users.noreply.github.com"


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


def commit(clone: Path, name: str, email: str = BOT) -> str:
    (clone / name).write_text(name, encoding="utf-8")
    git(clone, "add", name, email=email)
    git(clone, "commit", "-qm", f"add {name}", email=email)
    return git(clone, "rev-parse", "HEAD")


def push(clone: Path, *flags: str, branch: str = "bump/pins") -> subprocess.CompletedProcess[str]:
    argv = [str(SCRIPT), *flags, "origin", branch, "main", BOT]
    env = {"HOME": str(clone), "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True, check=False)


def setup(tmp_path: Path) -> tuple[Path, Path]:
    remote, clone = tmp_path / "remote.git", tmp_path / "clone"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    git(clone, "switch", "-qc", "main")
    commit(clone, "base")
    git(clone, "push", "-q", "origin", "main")
    return remote, clone


def test_created_then_replaced_while_only_the_bot_pushed(tmp_path: Path) -> None:
    remote, clone = setup(tmp_path)
    git(clone, "switch", "-qc", "bump/pins")
    first = commit(clone, "bump-1")
    done = push(clone)
    assert done.returncode == 0, done.stderr
    assert git(remote, "rev-parse", "bump/pins") == first
    git(clone, "reset", "-q", "--hard", "main")  # next week's bump starts from main again
    second = commit(clone, "bump-2")
    done = push(clone)
    assert done.returncode == 0, done.stderr
    assert "replaced bump/pins" in done.stderr
    assert git(remote, "rev-parse", "bump/pins") == second


def test_someone_elses_commit_stops_the_push(tmp_path: Path) -> None:
    remote, clone = setup(tmp_path)
    git(clone, "switch", "-qc", "bump/pins")
    commit(clone, "bump-1")
    assert push(clone).returncode == 0
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", "-b", "bump/pins", str(remote), str(human))
    theirs = commit(human, "fix-by-hand", email="dev@example.org")
    git(human, "push", "-q", "origin", "bump/pins")
    git(clone, "reset", "-q", "--hard", "main")
    commit(clone, "bump-2")
    done = push(clone)
    assert done.returncode == 3
    assert done.stdout.splitlines() == [f"{theirs} dev@example.org add fix-by-hand"]
    assert git(remote, "rev-parse", "bump/pins") == theirs  # nothing pushed over it


def test_a_humans_update_branch_does_not_stop_the_bot(tmp_path: Path) -> None:
    remote, clone = setup(tmp_path)
    git(clone, "switch", "-qc", "bump/pins")
    commit(clone, "bump-1")
    assert push(clone).returncode == 0
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", str(remote), str(human))
    git(human, "switch", "-q", "main")
    commit(human, "feature", email="dev@example.org")  # main moves on
    git(human, "push", "-q", "origin", "main")
    git(human, "switch", "-q", "bump/pins")  # "Update branch": main merged into the pull request's branch
    git(human, "merge", "-q", "--no-edit", "main", email="noreply@github.com")
    git(human, "push", "-q", "origin", "bump/pins")
    git(clone, "fetch", "-q", "origin")
    git(clone, "reset", "-q", "--hard", "origin/main")
    second = commit(clone, "bump-2")
    done = push(clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '("Update branch"); going on over it' in done.stderr
    assert git(remote, "rev-parse", "bump/pins") == second
    # a merge of main that also changes a file by hand is someone else's work: it stops the bot
    git(human, "fetch", "-q", "origin")
    git(human, "switch", "-q", "main")
    commit(human, "feature-2", email="dev@example.org")
    git(human, "push", "-q", "origin", "main")
    git(human, "switch", "-q", "bump/pins")
    git(human, "reset", "-q", "--hard", "origin/bump/pins")
    git(human, "merge", "-q", "--no-commit", "main", email="dev@example.org")
    (human / "bump-2").write_text("edited while merging", encoding="utf-8")
    git(human, "commit", "-qam", "merge main, and a fix", email="dev@example.org")
    git(human, "push", "-q", "origin", "bump/pins")
    done = push(clone)
    assert done.returncode == 3
    assert done.stdout.strip().endswith("dev@example.org merge main, and a fix")


def test_check_says_whether_an_overtaken_pull_request_may_be_closed(tmp_path: Path) -> None:
    remote, clone = setup(tmp_path)
    absent = push(clone, "--check", branch="bump/pins-minor")
    assert (absent.returncode, absent.stderr.strip()) == (0, "push-bot-branch: bump/pins-minor does not exist")
    git(clone, "switch", "-qc", "bump/pins")
    mine = commit(clone, "bump-1")
    assert push(clone).returncode == 0
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", str(remote), str(human))
    git(human, "switch", "-q", "main")
    commit(human, "feature", email="dev@example.org")
    git(human, "push", "-q", "origin", "main")
    git(human, "switch", "-q", "bump/pins")
    git(human, "merge", "-q", "--no-edit", "main", email="noreply@github.com")  # "Update branch"
    git(human, "push", "-q", "origin", "bump/pins")
    git(clone, "reset", "-q", "--hard", "main")
    commit(clone, "not-to-be-pushed")
    checked = push(clone, "--check")
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stderr
    assert "has only the bot's commits" in checked.stderr  # closable: the bot's commit and an Update branch
    assert git(remote, "rev-parse", "bump/pins^1") == mine  # --check pushed nothing
    theirs = commit(human, "fix-by-hand", email="dev@example.org")
    git(human, "push", "-q", "origin", "bump/pins")
    kept = push(clone, "--check")
    assert kept.returncode == 3
    assert kept.stdout.splitlines() == [f"{theirs} dev@example.org add fix-by-hand"]
    assert git(remote, "rev-parse", "bump/pins") == theirs
