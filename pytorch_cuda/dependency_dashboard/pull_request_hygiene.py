"""What every bot pull request carries and when it stays away, as Renovate does it.

- **Labels.** Every bot pull request has `dependencies` and one naming its kind: `bump:GROUP` (a group's pins),
  `lock-maintenance`, `security` (the security lane's fixes).
- **A closed pull request stays closed for that content.** Each body ends with a marker of what it carries (the
  group's pins at their new versions, or the lock changes of lock maintenance), hashed into a key. A run whose
  content has the key of a pull request that a person closed without merging opens none (Renovate's "will not be
  recreated for this version"); the next version is new content, a new key, and a new pull request. A pull request
  the bot closed itself (overtaken by the default branch) has its title end with ` - autoclosed`, as Renovate's,
  and does not count: a person did not turn that content down.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytorch_cuda.bump.group_prs import branch_of
from pytorch_cuda.bump.groups import GROUPS, Group
from pytorch_cuda.dependency_dashboard.group_boxes import LOCK_MAINTENANCE, LOCK_MAINTENANCE_BRANCH
from pytorch_cuda.errors import UserError

DEPENDENCIES_LABEL = "dependencies"
AUTOCLOSED = " - autoclosed"  # the title's end of a pull request the bot closed (Renovate's convention)
_MARKER = re.compile(r"<!-- bot-content: (?P<key>[0-9a-f]{16}) -->")


def content_key(items: Iterable[str]) -> str:
    """The key of what a pull request carries: the same items (in any order) give the same key."""
    return hashlib.sha256("\n".join(sorted(set(items))).encode()).hexdigest()[:16]


def marker(key: str) -> str:
    return f"<!-- bot-content: {key} -->"


@dataclass(frozen=True)
class BotPullRequest:
    """One bot pull request of this run: its branch, labels, and the key of what it carries."""

    kind: str  # a group (security, major, minor, patch) or lock-maintenance
    branch: str
    labels: tuple[str, ...]
    carries: tuple[str, ...]  # "python_packages.numpy=2.5.6", "images/x.lock:  pluggy 1.5.0 -> 1.6.0"

    @property
    def key(self) -> str:
        return content_key(self.carries)


def group_pull_request(plan: Mapping[str, Any], group: str) -> BotPullRequest:
    """A group's pull request from a bump's JSON: its pins at their new versions and its Debian packages."""
    if group not in GROUPS:
        raise UserError(cause=f"{group!r} is not a group", fix=f"name one of {', '.join(GROUPS)}")
    pins = [f"{m['pin']}={m['new']}" for m in plan.get("moved", []) if m.get("group") == group]
    planned: Mapping[str, Any] = next((g for g in plan.get("groups", []) if g.get("group") == group), {})
    newer = {d["package"]: d["new"] for d in plan.get("debian_updates", [])}
    debian = [f"debian:{name}={newer.get(name, '')}" for name in planned.get("debian", [])]
    named: Group = next(g for g in GROUPS if g == group)
    return BotPullRequest(group, branch_of(named), (DEPENDENCIES_LABEL, f"bump:{group}"), (*pins, *debian))


def lock_maintenance_pull_request(locks: Sequence[Mapping[str, Any]]) -> BotPullRequest:
    """Lock maintenance's pull request from `build.py lock --upgrade --json`: every lock change."""
    carries = [f"{lock['path']}:{line.strip()}" for lock in locks for line in lock.get("changes", [])]
    return BotPullRequest(
        LOCK_MAINTENANCE, LOCK_MAINTENANCE_BRANCH, (DEPENDENCIES_LABEL, LOCK_MAINTENANCE), tuple(carries)
    )


@dataclass(frozen=True)
class ClosedPullRequest:
    number: int
    url: str


def closed_by_a_person(key: str, closed: object) -> ClosedPullRequest | None:
    """The pull request closed without merging whose marker is `key` (`gh pr list --state closed --json
    number,url,title,body,mergedAt`), or None: then this content may be proposed again. One the bot closed (its title
    ends with ` - autoclosed`) was not closed by a person."""
    if not isinstance(closed, list) or not all(isinstance(item, dict) for item in closed):
        raise UserError(
            cause="the closed pull requests are not a JSON list of objects",
            fix="pass the output of `gh pr list --state closed --head BRANCH --json number,url,title,body,mergedAt`",
        )
    for item in closed:
        if item.get("mergedAt"):
            continue  # merged: the default branch has it, and the run has nothing to propose
        if str(item.get("title") or "").endswith(AUTOCLOSED):
            continue  # the bot closed it (overtaken), not a person
        found = _MARKER.search(str(item.get("body") or ""))
        if found and found["key"] == key:
            return ClosedPullRequest(int(item.get("number", 0)), str(item.get("url", "")))
    return None


def decision(pull: BotPullRequest, closed: object | None) -> dict[str, Any]:
    """What the workflow does with this run's pull request, as JSON."""
    found = closed_by_a_person(pull.key, closed) if closed is not None else None
    return {
        "kind": pull.kind,
        "branch": pull.branch,
        "labels": list(pull.labels),
        "key": pull.key,
        "marker": marker(pull.key),
        "carries": list(pull.carries),
        "open": bool(pull.carries) and found is None,
        "closed_by": None if found is None else {"number": found.number, "url": found.url},
    }
