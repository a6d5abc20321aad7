"""The bot's branch guard, as Renovate's: push HEAD to a bot branch (bump/pins-GROUP, security/fixes) unless someone
else has pushed to it. Every commit on the branch that BASE lacks must be the bot's (author and committer email the
bot's), or a clean merge of BASE into it (GitHub's "Update branch" button: its second parent is on BASE and its tree
is what merging its parents gives). HEAD then replaces the branch with --force-with-lease on the fetched commit, so a
push that lands between the fetch and ours is refused too. `check` answers the same question and pushes nothing
(an overtaken pull request may be closed only when no one else's work is on its branch)."""

from __future__ import annotations

import base64
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytorch_cuda.errors import EngineError

Verdict = Literal["absent", "created", "replaced", "only the bot's", "someone else's"]


@dataclass(frozen=True)
class ForeignCommit:
    sha: str
    email: str
    subject: str

    def line(self) -> str:
        return f"{self.sha} {self.email} {self.subject}"


@dataclass(frozen=True)
class Guarded:
    verdict: Verdict
    others: tuple[ForeignCommit, ...] = ()  # someone else's commits (verdict "someone else's")
    updates: tuple[str, ...] = ()  # "Update branch" merges the bot went on over


@dataclass(frozen=True)
class Checkout:
    """A git work tree and the remote the bot pushes to (a URL or a remote's name)."""

    root: Path
    remote: str = "origin"
    token: str | None = None  # sent as an HTTP header (as actions/checkout does), never in a URL or argv

    def git(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ)
        if self.token:
            basic = base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
            env |= {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraheader"}
            env["GIT_CONFIG_VALUE_0"] = f"AUTHORIZATION: basic {basic}"
        done = subprocess.run(["git", *argv], cwd=self.root, env=env, capture_output=True, text=True, check=False)
        if check and done.returncode != 0:
            raise EngineError(
                cause=f"`git {' '.join(argv[:3])}` failed in {self.root} (exit {done.returncode}): "
                + done.stderr.strip(),
                fix="run the bot in a clone of the repository, with a token that may push to it",
            )
        return done

    def rev(self, ref: str) -> str:
        return self.git("rev-parse", ref).stdout.strip()


def _fetch(checkout: Checkout, branch: str) -> str | None:
    """Fetch `branch` into refs/bot/BRANCH; its commit, or None when the remote has no such branch."""
    ref = f"refs/bot/{branch}"
    listed = checkout.git("ls-remote", "--heads", checkout.remote, f"refs/heads/{branch}").stdout.strip()
    if not listed:
        return None
    checkout.git("fetch", "--quiet", checkout.remote, f"+refs/heads/{branch}:{ref}")
    return checkout.rev(ref)


def _update_merge(checkout: Checkout, sha: str, base: str) -> bool:
    parents = checkout.git("rev-list", "--parents", "-n", "1", sha).stdout.split()
    if len(parents) != 3:
        return False
    if checkout.git("merge-base", "--is-ancestor", parents[2], base, check=False).returncode != 0:
        return False
    merged = checkout.git("merge-tree", "--write-tree", parents[1], parents[2], check=False)
    return merged.returncode == 0 and merged.stdout.split()[0] == checkout.rev(f"{sha}^{{tree}}")


def _inspect(checkout: Checkout, branch: str, base: str, bot_email: str) -> tuple[str | None, Guarded]:
    base_ref = f"refs/bot/{base}"
    if _fetch(checkout, base) is None:
        raise EngineError(cause=f"{checkout.remote} has no branch {base}", fix="pass the default branch as the base")
    lease = _fetch(checkout, branch)
    if lease is None:
        return None, Guarded("absent")
    others, updates = [], []
    log = checkout.git("log", "--format=%H%x09%ae%x09%ce%x09%s", f"{base_ref}..{lease}").stdout
    for line in filter(None, log.splitlines()):
        sha, author, committer, subject = line.split("\t", 3)
        if author == bot_email and committer == bot_email:
            continue
        if _update_merge(checkout, sha, base_ref):
            updates.append(sha)
            continue
        others.append(ForeignCommit(sha, author, subject))
    if others:
        return lease, Guarded("someone else's", tuple(others), tuple(updates))
    return lease, Guarded("only the bot's", (), tuple(updates))


def check(checkout: Checkout, branch: str, base: str, bot_email: str) -> Guarded:
    """Whether `branch` is absent or only the bot's (then its pull request may be closed); pushes nothing."""
    return _inspect(checkout, branch, base, bot_email)[1]


def push(checkout: Checkout, branch: str, base: str, bot_email: str) -> Guarded:
    """Push HEAD to `branch` unless someone else's commits are on it (then nothing is pushed)."""
    lease, found = _inspect(checkout, branch, base, bot_email)
    if found.verdict == "someone else's":
        return found
    if lease is None:
        checkout.git("push", "--quiet", checkout.remote, f"HEAD:refs/heads/{branch}")
        return Guarded("created")
    lease_flag = f"--force-with-lease=refs/heads/{branch}:{lease}"
    checkout.git("push", "--quiet", lease_flag, checkout.remote, f"HEAD:refs/heads/{branch}")
    return Guarded("replaced", (), found.updates)
