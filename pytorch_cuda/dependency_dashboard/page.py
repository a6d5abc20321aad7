"""The dashboard's whole body and what its ticked boxes ask. bump's render (pytorch_cuda/bump/dashboard.py) gives
the sections of the plan; this adds the box per group and the bot's open pull requests, and renders a page even
when the bump's JSON is missing because its job failed (the failures say which), so that the issue is rewritten
exactly when something went wrong. `dashboard_requests` turns the ticked boxes into the runs dashboard.yml starts:
one group run per ticked group (with the skip-age and approve boxes passed on), a lock-maintenance run, and a
planning run for a rebase, or for skip-age or approve ticked without a group."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytorch_cuda.bump.dashboard import render, requests
from pytorch_cuda.dependency_dashboard.group_boxes import (
    LOCK_MAINTENANCE,
    OpenPullRequest,
    asked_groups,
    group_box_lines,
    open_pull_request_lines,
)
from pytorch_cuda.errors import UserError

NO_PLAN = "unknown: the bump's JSON is missing (its job did not finish)"


def missing_plan(failed: Sequence[str]) -> dict[str, Any]:
    """The plan of a run whose bump job left no JSON: allowed only when the failures are named."""
    if not failed:
        raise UserError(
            cause="the bump's JSON does not exist, and no --failed says why",
            fix="pass the output of `build.py bump --dry-run --json`, or name the job that failed with --failed",
        )
    return {"result": NO_PLAN}


def render_page(
    plan: Mapping[str, Any],
    *,
    failed: Sequence[str] = (),
    run: str = "",
    open_prs: Sequence[OpenPullRequest] | None = None,
) -> str:
    """The issue's Markdown: bump's sections, a box per group, and (when given) the bot's open pull requests."""
    lines = [
        "",
        f"## Run a group now ({len(group_box_lines(plan))})",
        "",
        "Tick a box, and its run starts (bump.yml's group run, or lock-maintenance.yml): as Renovate's boxes.",
        "",
        *group_box_lines(plan),
    ]
    if open_prs is not None:
        rows = open_pull_request_lines(open_prs)
        lines += ["", f"## Open pull requests of the bot ({len(open_prs)})", "", *(rows or ["None is open."])]
    return render(plan, failed=failed, run=run) + "\n".join(lines) + "\n"


@dataclass(frozen=True)
class DispatchedRun:
    """One workflow run a ticked box starts."""

    workflow: str
    group: str  # "" for the planning run
    flags: tuple[str, ...]  # the bump's flags that run passes (`build.py bump ...`)

    def as_dict(self) -> dict[str, Any]:
        return {"workflow": self.workflow, "group": self.group, "flags": list(self.flags)}


def dashboard_requests(body: str) -> dict[str, Any]:
    """What the ticked boxes ask, as JSON: bump's rebase, skip_age, approve and flags, the ticked groups, and
    the runs to start (each workflow, its group, the bump's flags)."""
    asked = requests(body)
    groups = asked_groups(body)
    flags = tuple(asked.bump_flags())
    runs = [DispatchedRun("bump.yml", g, ("--group", g, *flags)) for g in groups if g != LOCK_MAINTENANCE]
    if LOCK_MAINTENANCE in groups:
        runs.append(DispatchedRun("lock-maintenance.yml", LOCK_MAINTENANCE, ()))
    bump_groups = [run for run in runs if run.workflow == "bump.yml"]
    if asked.rebase or (flags and not bump_groups):
        runs.insert(0, DispatchedRun("bump.yml", "", ("--dry-run", *flags)))
    return {**asked.as_dict(), "groups": list(groups), "runs": [run.as_dict() for run in runs]}
