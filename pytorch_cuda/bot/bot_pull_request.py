"""A bot's pull request, as Renovate keeps its own: the change committed on the bot's branch (made again from the
default branch each run), pushed only through the branch guard, then the one open pull request of that branch
edited, or a new one opened, with its labels. Someone else's commits on the branch stop the push: the pull request
gets a comment listing them instead. A request with a content key (pytorch_cuda/dependency_dashboard/
pull_request_hygiene.py) ends its body with the key's marker, and when no pull request of its branch is open and a
person closed one with the same key, nothing is committed, pushed or opened ("declined": that version stays
closed; the next version has another key). `close_overtaken` closes a pull request that the default branch has
overtaken, unless someone else's work is on its branch, and marks its title ` - autoclosed` (closed by the bot)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytorch_cuda.bot.branch_guard import Checkout, ForeignCommit, check, push
from pytorch_cuda.bot.github_rest import GitHub
from pytorch_cuda.dependency_dashboard.pull_request_hygiene import AUTOCLOSED, closed_by_a_person, marker

PullRequestAction = Literal["created", "updated", "blocked", "unchanged", "declined"]
Closing = Literal["absent", "closed", "kept"]


@dataclass(frozen=True)
class Bot:
    """Who commits: the guard lets only this email's commits be replaced."""

    name: str
    email: str


@dataclass(frozen=True)
class PullRequestRequest:
    branch: str
    base: str
    title: str
    body: str
    commit_message: str
    paths: tuple[str, ...]  # what the commit takes from the work tree (matrix.yaml, images/, ...)
    patch: Path | None = None  # applied to the work tree first (a plan made by an earlier job)
    labels: tuple[str, ...] = ()
    blocked_note: str = ""  # what the comment adds when someone else's commits stop the push
    content_key: str = ""  # the key of what it carries: a person's close of the same key holds (empty: no check)

    def marked_body(self) -> str:
        return f"{self.body.rstrip()}\n\n{marker(self.content_key)}\n" if self.content_key else self.body


@dataclass(frozen=True)
class PullRequestOutcome:
    action: PullRequestAction
    number: int | None = None  # "declined": the pull request a person closed with this content
    others: tuple[ForeignCommit, ...] = ()


def _fenced(others: tuple[ForeignCommit, ...]) -> str:
    return "```\n" + "\n".join(c.line() for c in others) + "\n```"


def blocked_comment(branch: str, others: tuple[ForeignCommit, ...], note: str) -> str:
    return (
        f"Not updated: `{branch}` has commits by someone else, and the bot does not push over them:\n\n"
        f"{_fenced(others)}\n\nMerge or close this pull request, or delete the branch, and the next run opens a "
        "fresh one." + (f"\n\n{note}" if note else "")
    )


def commit(checkout: Checkout, bot: Bot, request: PullRequestRequest) -> bool:
    """Apply the patch and commit the paths on a branch made again from HEAD; False when nothing changed."""
    if request.patch is not None and request.patch.stat().st_size:
        checkout.git("apply", str(request.patch.resolve()))
    checkout.git("switch", "--quiet", "-C", request.branch)
    known = [p for p in request.paths if (checkout.root / p).exists() or checkout.git("ls-files", "--", p).stdout]
    if known:  # a path neither in the work tree nor in git is nothing to commit (git add would refuse it)
        checkout.git("add", "-A", "--", *known)
    if checkout.git("diff", "--cached", "--quiet", check=False).returncode == 0:
        return False
    identity = ("-c", f"user.name={bot.name}", "-c", f"user.email={bot.email}", "-c", "commit.gpgsign=false")
    checkout.git(*identity, "commit", "--quiet", "-m", request.commit_message)
    return True


def open_or_update(checkout: Checkout, github: GitHub, bot: Bot, request: PullRequestRequest) -> PullRequestOutcome:
    """Commit, push through the guard, then edit the branch's open pull request or open one (with its labels);
    nothing at all when none is open and a person closed one with the request's content key."""
    if request.content_key and github.open_pull(request.branch) is None:
        declined = closed_by_a_person(request.content_key, github.closed_pulls(request.branch))
        if declined is not None:
            return PullRequestOutcome("declined", declined.number)
    if not commit(checkout, bot, request):
        return PullRequestOutcome("unchanged")
    guarded = push(checkout, request.branch, request.base, bot.email)
    existing = github.open_pull(request.branch)
    if guarded.verdict == "someone else's":
        if existing is not None:
            github.comment(existing.number, blocked_comment(request.branch, guarded.others, request.blocked_note))
        return PullRequestOutcome("blocked", existing.number if existing else None, guarded.others)
    action: PullRequestAction = "updated"
    if existing is not None:
        github.edit_pull(existing.number, body=request.marked_body())
        number = existing.number
    else:
        made = github.create_pull(request.base, request.branch, request.title, request.marked_body())
        number, action = made.number, "created"
    if request.labels:
        for label in request.labels:
            github.ensure_label(label)
        github.add_labels(number, request.labels)
    return PullRequestOutcome(action, number)


def close_overtaken(checkout: Checkout, github: GitHub, bot: Bot, branch: str, base: str, *, reason: str) -> Closing:
    """Close the branch's open pull request (`reason`: why nothing is left to do), unless someone else's commits
    are on the branch: then a comment says so and it stays."""
    existing = github.open_pull(branch)
    if existing is None:
        return "absent"
    guarded = check(checkout, branch, base, bot.email)
    if guarded.verdict == "someone else's":
        github.comment(
            existing.number,
            f"Not closed: {reason}, but `{branch}` has commits by someone else, which the bot does not throw away:"
            f"\n\n{_fenced(guarded.others)}\n\nMerge or close this pull request yourself.",
        )
        return "kept"
    github.comment(existing.number, f"Closed by the bot: {reason}.")
    title = existing.title if existing.title.endswith(AUTOCLOSED) else f"{existing.title}{AUTOCLOSED}"
    github.edit_pull(existing.number, state="closed", title=title)
    return "closed"
