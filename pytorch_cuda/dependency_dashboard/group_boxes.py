"""A box per group, as Renovate's dependency dashboard has one per branch: ticking the box of `patch` asks for
bump.yml's group run of patch (`-f group=patch`: only that group's moves, on `bump/pins-patch`), and the box of
lock maintenance for lock-maintenance.yml's run. Every render has every box, whether or not the plan has moves
for the group (a run with nothing to move says so, and closes what the default branch has overtaken). The bot's
open pull requests (bump groups, lock maintenance, the security lane's fixes) are listed from `gh pr list`'s JSON."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytorch_cuda.bump.group_prs import branch_of
from pytorch_cuda.bump.groups import GROUPS
from pytorch_cuda.errors import UserError

LOCK_MAINTENANCE = "lock-maintenance"
LOCK_MAINTENANCE_BRANCH = "bump/lock-maintenance"
SECURITY_FIX_BRANCH = "security/fixes"  # security.yml's `audit --fix` pull request
RUNNABLE = (*GROUPS, LOCK_MAINTENANCE)  # what a group box can ask for
BOT_BRANCHES = ("bump/", "security/")  # every branch the bot pushes starts so
_GROUP_BOX = re.compile(r"^\s*[-*] \[[xX]\] .*<!-- bump-dashboard: group (?P<group>[a-z-]+) -->\s*$")


def _box(text: str, group: str) -> str:
    return f"- [ ] {text} <!-- bump-dashboard: group {group} -->"


def group_box_lines(plan: Mapping[str, Any]) -> list[str]:
    """One box per group, and one for lock maintenance, each saying what its run would carry this time."""
    planned = {g["group"]: g for g in plan.get("groups", [])}
    rows = []
    for group in GROUPS:
        found = planned.get(group)
        carries = ", ".join(f"`{pin}`" for pin in found["pins"]) if found else ""
        if found and found.get("debian"):
            carries = ", ".join(filter(None, [carries, f"{len(found['debian'])} Debian package(s)"]))
        now = f"carries {carries}" if carries else "nothing to move in the last plan: the run checks again"
        rows.append(_box(f"**{group}**: run its bump now (`{branch_of(group)}`; {now})", group))
    rows.append(
        _box(
            f"**{LOCK_MAINTENANCE}**: re-resolve every lock now, transitive pins forward only "
            f"(`{LOCK_MAINTENANCE_BRANCH}`)",
            LOCK_MAINTENANCE,
        )
    )
    return rows


def asked_groups(body: str) -> tuple[str, ...]:
    """The groups whose box is ticked, in the dashboard's order; a box of a group this project has not is refused."""
    ticked = [match["group"] for line in body.splitlines() if (match := _GROUP_BOX.match(line))]
    unknown = sorted(set(ticked) - set(RUNNABLE))
    if unknown:
        raise UserError(
            cause=f"the dashboard's body ticks the box of {', '.join(unknown)}, which is no group of the bot "
            f"(groups: {', '.join(RUNNABLE)})",
            fix="untick it; the next run of bump.yml rewrites the dashboard with the boxes it knows",
        )
    return tuple(group for group in RUNNABLE if group in ticked)


@dataclass(frozen=True)
class OpenPullRequest:
    """One open pull request of the bot, as `gh pr list --json number,title,url,headRefName` gives it."""

    number: int
    title: str
    url: str
    branch: str

    @property
    def kind(self) -> str:
        if self.branch == LOCK_MAINTENANCE_BRANCH:
            return LOCK_MAINTENANCE
        if self.branch.startswith("bump/pins-"):
            return f"bump group {self.branch.removeprefix('bump/pins-')}"
        if self.branch == SECURITY_FIX_BRANCH:
            return "security fix (audit --fix)"
        return "bot"


def open_pull_requests(listed: object) -> list[OpenPullRequest]:
    """The bot's pull requests among `gh pr list`'s JSON (its branches start with bump/ or security/)."""
    if not isinstance(listed, list) or not all(isinstance(item, dict) for item in listed):
        raise UserError(
            cause="the open pull requests are not a JSON list of objects",
            fix="pass the output of `gh pr list --state open --json number,title,url,headRefName`",
        )
    try:
        found = [OpenPullRequest(int(p["number"]), str(p["title"]), str(p["url"]), str(p["headRefName"]))
                 for p in listed]  # fmt: skip
    except (KeyError, TypeError, ValueError) as error:
        raise UserError(
            cause=f"an open pull request lacks {error} (each needs number, title, url and headRefName)",
            fix="pass the output of `gh pr list --state open --json number,title,url,headRefName`",
        ) from None
    return sorted((p for p in found if p.branch.startswith(BOT_BRANCHES)), key=lambda p: p.number)


def open_pull_request_lines(prs: Sequence[OpenPullRequest]) -> list[str]:
    rows = ["| pull request | kind | branch |", "|---|---|---|"]
    rows += [f"| [#{p.number} {_cell(p.title)}]({p.url}) | {p.kind} | `{p.branch}` |" for p in prs]
    return rows if prs else []


def _cell(text: str) -> str:
    """Text inside a Markdown table's cell: a | would end the cell, a [ or ] the link."""
    return re.sub(r"([|\[\]])", r"\\\1", text)
