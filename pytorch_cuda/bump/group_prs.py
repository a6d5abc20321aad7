"""One branch and pull request per group (security, major, minor, patch), planned from the whole bump of the
default branch, as Renovate's groups are: a group with moves is made again on its branch `bump/pins-GROUP` (its
own run of bump.yml: candidate, GPU fleet, pull request); a group with none has been overtaken by the default
branch (merged, or its pins moved there by hand), so its open pull request is closed, unless someone else's
commits are on the branch (bump.yml then comments and keeps it: the bot's branch guard). A partial
run (a target's index did not answer) closes nothing: a group may have moves on the targets it could not check;
nor does a run without an audit close the security group's: it could not tell a security fix from the rest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytorch_cuda.bump.bump_plan import BumpPlan
from pytorch_cuda.bump.groups import GROUPS, Group, PinAdvisory, debian_group, fixes, group_of

BRANCH_PREFIX = "bump/pins-"
GroupAction = Literal["update", "close", "keep"]


def branch_of(group: Group) -> str:
    return f"{BRANCH_PREFIX}{group}"


@dataclass(frozen=True)
class GroupPullRequest:
    """What one group's pull request carries this run, and what the workflow does with it."""

    group: Group
    pins: tuple[str, ...]  # matrix.yaml's pins it moves (and bases.B.digest), in the plan's order
    debian: tuple[str, ...]  # Debian packages newer than the images', which its rebuild takes
    advisories: tuple[str, ...]  # the advisories it fixes (the security group's)
    action: GroupAction
    why: str

    @property
    def branch(self) -> str:
        return branch_of(self.group)

    def as_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "branch": self.branch,
            "action": self.action,
            "why": self.why,
            "pins": list(self.pins),
            "debian": list(self.debian),
            "advisories": list(self.advisories),
        }


def _action(
    plan: BumpPlan, group: Group, pins: Sequence[str], debian: Sequence[str], audited: bool
) -> tuple[GroupAction, str]:
    if pins or debian:
        parts = [f"{len(pins)} pin(s)" if pins else "", f"{len(debian)} Debian package(s)" if debian else ""]
        return "update", f"its branch made again from the default branch ({' and '.join(p for p in parts if p)})"
    if plan.partial:
        left = ", ".join(t.target for t in plan.targets if t.unreachable)
        return "keep", f"nothing to move on the targets checked; not closed: {left} not checked this run"
    if group == "security" and not audited:
        return "keep", "no security fix found, but no audit was given (bump --advisories): not closed"
    return "close", "overtaken: the default branch has every pin this group would move"


def plan_pull_requests(
    plan: BumpPlan, advisories: Sequence[PinAdvisory] = (), *, audited: bool = True
) -> tuple[GroupPullRequest, ...]:
    """Each group's pull request this run, from the whole bump of the default branch (every group's moves);
    `audited`: the advisories are an audit's (without one, the security group's pull request is never closed)."""
    found = []
    for group in GROUPS:
        moves = [m for m in plan.moved if group_of(m, plan, advisories) == group]
        pins = [m.where for m in moves]
        if group == "patch":
            pins += [f"bases.{base.base}.digest" for base in plan.moved_bases]
        debian = [update.package for update in plan.debian] if debian_group(plan) == group else []
        ids = sorted({i for m in moves for i in fixes(m, plan, advisories)})
        action, why = _action(plan, group, pins, debian, audited)
        found.append(GroupPullRequest(group, tuple(pins), tuple(debian), tuple(ids), action, why))
    return tuple(found)
