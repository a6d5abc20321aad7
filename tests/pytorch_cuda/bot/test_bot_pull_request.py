"""The bot's pull request end to end against a local git remote (a bare repository) and a fake of GitHub's REST
API: the change committed on the bot's branch and pushed, the pull request opened with its labels, then edited
(not repeated) the next week; someone else's commit on the branch stops the push and becomes a comment naming it;
an overtaken pull request is closed unless someone else's work is on its branch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytorch_cuda.bot.bot_pull_request import Bot, PullRequestRequest, close_overtaken, open_or_update
from pytorch_cuda.bot.branch_guard import Checkout
from pytorch_cuda.bot.github_rest import GitHub
from tests.support.fake_github import REPO, TOKEN, FakeGitHub, fake_github
from tests.support.git_remote import BOT, bare_remote, git, human_pushes

BOT_ID = Bot("pytorch-cuda bump", BOT)


@dataclass(frozen=True)
class Scene:
    """A fake GitHub, its client, a bare remote with main, and the bot's clone of it (pins.txt changed)."""

    fake: FakeGitHub
    github: GitHub
    remote: Path
    clone: Path
    checkout: Checkout


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    with fake_github() as fake:
        remote, clone = bare_remote(tmp_path)
        (clone / "pins.txt").write_text("numpy==2.5.6\n", encoding="utf-8")
        yield Scene(fake, GitHub(REPO, TOKEN, fake.url), remote, clone, Checkout(clone, str(remote)))


def _request(body: str, **fields: object) -> PullRequestRequest:
    settings: dict[str, object] = {
        "branch": "security/fixes", "base": "main", "title": "security: fixes", "body": body,
        "commit_message": "security: move pins", "paths": ("pins.txt",), "labels": ("security",),
    } | fields  # fmt: skip
    return PullRequestRequest(**settings)  # type: ignore[arg-type]


def test_opened_with_labels_then_edited_the_next_week(tmp_path: Path, scene: Scene) -> None:
    fake, github, remote, clone, checkout = scene.fake, scene.github, scene.remote, scene.clone, scene.checkout
    first = open_or_update(checkout, github, BOT_ID, _request("week 1"))
    assert (first.action, first.number) == ("created", 1)
    assert git(remote, "show", "security/fixes:pins.txt") == "numpy==2.5.6"
    assert git(remote, "log", "-1", "--format=%ae %s", "security/fixes") == f"{BOT} security: move pins"
    (pull,) = fake.pulls()
    assert (pull["head"], pull["base"], pull["body"]) == ("security/fixes", "main", "week 1")
    assert [label["name"] for label in pull["labels"]] == ["security"]
    assert fake.labels == {"security"}
    git(clone, "switch", "-q", "main")  # next week: made again from the default branch
    (clone / "pins.txt").write_text("numpy==2.5.7\n", encoding="utf-8")
    second = open_or_update(checkout, github, BOT_ID, _request("week 2"))
    assert (second.action, second.number) == ("updated", 1)
    assert [p["body"] for p in fake.pulls()] == ["week 2"]  # one pull request, its body rewritten
    assert git(remote, "show", "security/fixes:pins.txt") == "numpy==2.5.7"
    assert git(remote, "rev-list", "--count", "main..security/fixes") == "1"  # replaced, not stacked


def test_someone_elses_commit_becomes_a_comment_and_nothing_is_pushed(tmp_path: Path, scene: Scene) -> None:
    fake, github, remote, clone, checkout = scene.fake, scene.github, scene.remote, scene.clone, scene.checkout
    assert open_or_update(checkout, github, BOT_ID, _request("week 1")).action == "created"
    theirs = human_pushes(tmp_path, remote, "security/fixes", "fix-by-hand")
    git(clone, "switch", "-q", "main")
    (clone / "pins.txt").write_text("numpy==2.5.7\n", encoding="utf-8")
    blocked = open_or_update(checkout, github, BOT_ID, _request("week 2", blocked_note="Today's findings: numpy"))
    assert (blocked.action, blocked.number, [c.sha for c in blocked.others]) == ("blocked", 1, [theirs])
    assert git(remote, "rev-parse", "security/fixes") == theirs
    (comment,) = fake.comments_on(1)
    assert f"{theirs} dev@example.org add fix-by-hand" in comment
    assert comment.endswith("Today's findings: numpy")
    assert [p["body"] for p in fake.pulls()] == ["week 1"]  # the body is left as it was


def test_a_patch_that_changes_nothing_opens_nothing(tmp_path: Path, scene: Scene) -> None:
    fake, github, remote, clone, checkout = scene.fake, scene.github, scene.remote, scene.clone, scene.checkout
    empty = tmp_path / "pins.patch"
    empty.write_text("", encoding="utf-8")
    (clone / "pins.txt").unlink()  # the change left nothing
    outcome = open_or_update(checkout, github, BOT_ID, _request("b", patch=empty))
    assert outcome.action == "unchanged"
    assert fake.calls == []
    assert "security/fixes" not in git(remote, "branch", "--list")


def test_an_overtaken_pull_request_is_closed_unless_someone_elses_work_is_on_it(tmp_path: Path, scene: Scene) -> None:
    fake, github, remote, checkout = scene.fake, scene.github, scene.remote, scene.checkout
    reason = "main already has every pin of the minor group"
    assert close_overtaken(checkout, github, BOT_ID, "security/fixes", "main", reason=reason) == "absent"
    assert open_or_update(checkout, github, BOT_ID, _request("b")).number == 1
    theirs = human_pushes(tmp_path, remote, "security/fixes", "fix-by-hand")
    assert close_overtaken(checkout, github, BOT_ID, "security/fixes", "main", reason=reason) == "kept"
    assert fake.items[1]["state"] == "open"
    assert theirs in fake.comments_on(1)[-1]
    git(remote, "update-ref", "refs/heads/security/fixes", git(remote, "rev-parse", f"{theirs}^"))  # theirs dropped
    assert close_overtaken(checkout, github, BOT_ID, "security/fixes", "main", reason=reason) == "closed"
    assert fake.items[1]["state"] == "closed"
    assert fake.comments_on(1)[-1] == f"Closed by the bot: {reason}."
