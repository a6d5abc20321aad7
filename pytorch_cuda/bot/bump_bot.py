"""What bump.yml's jobs do with the bump, in Python: the planning step (the bump of every target, its JSON, its pull
request body, the patch a group run made, and which groups to update or close), each group's pull request (its
body with the candidate and the diffs), closing the groups the default branch overtook, the GPU fleet's one comment,
and the dependency dashboard's failed group runs. docs/bump.md has the workflow around them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytorch_cuda.bot.bot_pull_request import (
    Bot,
    Closing,
    PullRequestOutcome,
    PullRequestRequest,
    close_overtaken,
    open_or_update,
)
from pytorch_cuda.bot.branch_guard import Checkout
from pytorch_cuda.bot.github_rest import GitHub
from pytorch_cuda.bump.bump_flow import BumpRequest, run_bump
from pytorch_cuda.bump.group_prs import branch_of
from pytorch_cuda.bump.groups import Group
from pytorch_cuda.dependency_dashboard.pull_request_hygiene import group_pull_request
from pytorch_cuda.errors import UserError

GPU_MARKER: Final = "<!-- pytorch-cuda bump: GPU results -->"
_DIFF_LIMIT: Final = 50_000  # characters of the patch in a pull request's body (GitHub takes 65,536 in all)


@dataclass(frozen=True)
class PlanRun:
    """What the planning step tells the jobs after it."""

    rebuild: bool
    update: tuple[str, ...]  # groups with moves: each gets a group run
    close: tuple[str, ...]  # groups the default branch overtook: their pull requests are closed
    unreachable: tuple[str, ...]  # targets whose index did not answer (a partial bump)
    exit_status: int

    def outputs(self) -> dict[str, str]:
        return {"rebuild": str(self.rebuild).lower(), "update": " ".join(self.update), "close": " ".join(self.close)}


def plan_run(  # noqa: PLR0917 - the workflow's inputs, one each
    root: Path,
    out: Path,
    group: Group | None,
    ignore_release_age: bool,
    approve: tuple[str, ...],
    advisories: Path | None,
    log: Callable[[str], None],
) -> PlanRun:
    """A planning run (no group: a dry run of every group) or a group run (its moves written): OUT gets bump.json,
    body.md (the pull request's body) and pins.patch (what the run changed in the checkout)."""
    out.mkdir(parents=True, exist_ok=True)
    audited = advisories if advisories is not None and advisories.is_file() and advisories.stat().st_size else None
    request = BumpRequest(
        root=root,
        matrix=None,
        target=None,  # every target
        dry_run=group is None,
        ignore_release_age=ignore_release_age,
        group=group,
        advisories=audited,
        approve=approve,
        pr_body=out / "body.md",
    )
    outcome = run_bump(request, log)
    (out / "bump.json").write_text(json.dumps(outcome.document, indent=2) + "\n", encoding="utf-8")
    patch = Checkout(root).git("diff").stdout
    (out / "pins.patch").write_text(patch, encoding="utf-8")
    return PlanRun(
        rebuild=outcome.plan.rebuild_needed,
        update=tuple(g.group for g in outcome.groups if g.action == "update"),
        close=tuple(g.group for g in outcome.groups if g.action == "close"),
        unreachable=tuple(t.target for t in outcome.plan.targets if t.unreachable is not None),
        exit_status=outcome.exit_status,
    )


def group_body(body: str, image: str, patch: str) -> str:
    """A group's pull request: the bump's body, the candidate that passed its CPU checks, and the diffs."""
    return (
        f"{body.rstrip()}\n\nThe cu12 candidate `{image}` built once and passed its CPU checks; the GPU fleet's\n"
        "`build.py report --diff` against the last release's results follows as a comment.\n\n"
        "<details><summary>Pin, lock and Debian record diffs</summary>\n\n"
        f"```diff\n{patch[:_DIFF_LIMIT]}\n```\n</details>\n"
    )


def open_group(  # noqa: PLR0917 - the group run's parts
    checkout: Checkout, github: GitHub, bot: Bot, group: Group, base: str, source: Path, image: str
) -> PullRequestOutcome:
    """Commit the group run's patch (SOURCE/pins.patch) to bump/pins-GROUP and open or update its pull request,
    labelled, its body (SOURCE/body.md) ending with the key of the group's moves (SOURCE/bump.json): a pull
    request of the same moves that a person closed is not opened again."""
    body = _read(source / "body.md")
    patch = source / "pins.patch"
    pull = group_pull_request(json.loads(_read(source / "bump.json")), group)
    request = PullRequestRequest(
        branch=branch_of(group),
        base=base,
        title=f"bump ({group}): the {group} group's newest pins within the policy",
        body=group_body(body, image, patch.read_text(encoding="utf-8")),
        commit_message=f"bump ({group}): pins, base and Debian record (build.py bump --group {group}, every target)",
        paths=("matrix.yaml", "images/"),
        patch=patch,
        labels=pull.labels,
        blocked_note=f"This week's bump (not applied):\n\n{body}",
        content_key=pull.key if pull.carries else "",
    )
    return open_or_update(checkout, github, bot, request)


def _read(path: Path) -> str:
    """A file the group run's planning step wrote into its output folder."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise UserError(
            cause=f"cannot read {path} ({error.strerror}): open-group takes the bump's body.md, pins.patch and "
            "bump.json from --from",
            fix="pass --from the folder that `build.py bot plan --out DIR --group GROUP` wrote",
        ) from None


def close_groups(
    checkout: Checkout, github: GitHub, bot: Bot, groups: Iterable[Group], base: str
) -> dict[str, Closing]:
    """Close each group's pull request that `base` overtook (it already has every pin of the group)."""
    return {
        group: close_overtaken(
            checkout, github, bot, branch_of(group), base, reason=f"{base} already has every pin of the {group} group"
        )
        for group in groups
    }


def gpu_comment(diffs: Path, gpu_result: str, fallback: str, html_url: str | None) -> str:
    """The GPU fleet's one comment: each runner's `report --diff` (DIFFS/RUNNER/diff.md), or that none came."""
    parts = [
        GPU_MARKER,
        f"## GPU fleet on the candidate (gpu jobs: {gpu_result})\n",
        "Each runner's `results.json` against the latest released run of the same variant on the same\n"
        f"GPU in the results store, else `{fallback}` (`build.py report --diff`; a caution says\n"
        "when torch, CUDA, the GPU or the variant differ).",
    ]
    found = sorted(diffs.glob("*/diff.md"))
    for page in found:
        demoted = "\n".join("#" + line if line.startswith("#") else line for line in page.read_text().splitlines())
        parts.append(f"\n<details open><summary>{page.parent.name}</summary>\n\n{demoted}\n\n</details>")
    if not found:
        parts.append("\n**No GPU job left a results.json** (see the run's gpu jobs).")
    if html_url:
        parts.append(f"\nThe diffs as HTML pages (diff/RUNNER/diff.html): [bump-report-diff]({html_url})")
    return "\n".join(parts) + "\n"


def failed_group_runs(runs: Iterable[Mapping[str, Any]], prefix: str = "bump group ") -> list[str]:
    """For the dashboard: each group whose latest finished run (newest first in `runs`) failed, with its link."""
    latest: dict[str, Mapping[str, Any]] = {}
    for run in runs:
        title = str(run.get("display_title", ""))
        if run.get("status") == "completed" and title.startswith(prefix):
            latest.setdefault(title, run)
    return [
        f"{title.removeprefix('bump ')}: its latest run failed ({run['html_url']})"
        for title, run in sorted(latest.items())
        if run.get("conclusion") == "failure"
    ]
