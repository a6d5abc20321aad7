"""The branch guard (pytorch_cuda/bot/branch_guard.py) on real git repositories, a bare remote and clones: the
bot's branch is created, replaced while only the bot pushed to it (or a person pressed "Update branch"), and left
alone, with the other commits listed, once someone else pushed work of their own, as Renovate does; `check` answers
the same question and pushes nothing (an overtaken pull request is closed only when it says so)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda import cli
from pytorch_cuda.bot.branch_guard import Checkout, ForeignCommit, check, push
from tests.support.git_remote import BOT, bare_remote, commit, git, human_pushes


def test_created_then_replaced_while_only_the_bot_pushed(tmp_path: Path) -> None:
    remote, clone = bare_remote(tmp_path)
    checkout = Checkout(clone)
    git(clone, "switch", "-qc", "bump/pins")
    first = commit(clone, "bump-1")
    assert push(checkout, "bump/pins", "main", BOT).verdict == "created"
    assert git(remote, "rev-parse", "bump/pins") == first
    git(clone, "reset", "-q", "--hard", "main")  # next week's bump starts from main again
    second = commit(clone, "bump-2")
    assert push(checkout, "bump/pins", "main", BOT).verdict == "replaced"
    assert git(remote, "rev-parse", "bump/pins") == second


def test_someone_elses_commit_stops_the_push(tmp_path: Path) -> None:
    remote, clone = bare_remote(tmp_path)
    git(clone, "switch", "-qc", "bump/pins")
    commit(clone, "bump-1")
    assert push(Checkout(clone), "bump/pins", "main", BOT).verdict == "created"
    theirs = human_pushes(tmp_path, remote, "bump/pins", "fix-by-hand")
    git(clone, "reset", "-q", "--hard", "main")
    commit(clone, "bump-2")
    guarded = push(Checkout(clone), "bump/pins", "main", BOT)
    assert guarded.verdict == "someone else's"
    assert guarded.others == (ForeignCommit(theirs, "dev@example.org", "add fix-by-hand"),)
    assert git(remote, "rev-parse", "bump/pins") == theirs  # nothing pushed over it


def test_a_humans_update_branch_does_not_stop_the_bot(tmp_path: Path) -> None:
    remote, clone = bare_remote(tmp_path)
    checkout = Checkout(clone)
    git(clone, "switch", "-qc", "bump/pins")
    commit(clone, "bump-1")
    assert push(checkout, "bump/pins", "main", BOT).verdict == "created"
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", str(remote), str(human))
    git(human, "switch", "-q", "main")
    commit(human, "feature", email="dev@example.org")  # main moves on
    git(human, "push", "-q", "origin", "main")
    git(human, "switch", "-q", "bump/pins")  # "Update branch": main merged into the pull request's branch
    git(human, "merge", "-q", "--no-edit", "main", email="noreply@github.com")
    update = git(human, "rev-parse", "HEAD")
    git(human, "push", "-q", "origin", "bump/pins")
    git(clone, "fetch", "-q", "origin")
    git(clone, "reset", "-q", "--hard", "origin/main")
    second = commit(clone, "bump-2")
    guarded = push(checkout, "bump/pins", "main", BOT)
    assert (guarded.verdict, guarded.updates) == ("replaced", (update,))
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
    guarded = push(checkout, "bump/pins", "main", BOT)
    assert guarded.verdict == "someone else's"
    assert guarded.others[-1].line().endswith("dev@example.org merge main, and a fix")


def test_check_says_whether_an_overtaken_pull_request_may_be_closed(tmp_path: Path) -> None:
    remote, clone = bare_remote(tmp_path)
    checkout = Checkout(clone)
    assert check(checkout, "bump/pins-minor", "main", BOT).verdict == "absent"
    git(clone, "switch", "-qc", "bump/pins")
    mine = commit(clone, "bump-1")
    assert push(checkout, "bump/pins", "main", BOT).verdict == "created"
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
    assert check(checkout, "bump/pins", "main", BOT).verdict == "only the bot's"  # the bot's and an Update branch
    assert git(remote, "rev-parse", "bump/pins^1") == mine  # check pushed nothing
    theirs = commit(human, "fix-by-hand", email="dev@example.org")
    git(human, "push", "-q", "origin", "bump/pins")
    kept = check(checkout, "bump/pins", "main", BOT)
    assert (kept.verdict, [c.sha for c in kept.others]) == ("someone else's", [theirs])
    assert git(remote, "rev-parse", "bump/pins") == theirs


def test_the_command_keeps_the_scripts_exit_statuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`build.py bot guard [--check] REMOTE BRANCH BASE BOT_EMAIL` (what scripts/push-bot-branch.sh was): exit 0
    pushed, 3 with someone else's commits listed one `SHA email subject` a line on stdout."""
    remote, clone = bare_remote(tmp_path)
    monkeypatch.chdir(clone)
    git(clone, "switch", "-qc", "security/fixes")
    commit(clone, "fix-1")
    assert cli.main(["bot", "guard", "origin", "security/fixes", "main", BOT]) == 0
    theirs = human_pushes(tmp_path, remote, "security/fixes", "by-hand")
    capsys.readouterr()
    assert cli.main(["bot", "guard", "--check", str(remote), "security/fixes", "main", BOT]) == 3
    assert capsys.readouterr().out.splitlines() == [f"{theirs} dev@example.org add by-hand"]
