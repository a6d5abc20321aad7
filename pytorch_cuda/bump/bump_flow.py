"""`run_bump`: the whole `build.py bump` flow (pytorch_cuda/cli/bumping.py parses its flags into a BumpRequest and
prints the outcome): plan every pin, base digest and Debian update within the policy, sort the moves into groups,
then write them (matrix.yaml, images/, the locks) or, in a dry run, preview the locks' changes in a scratch copy.
`record_debian` is `bump --record-debian IMAGE`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytorch_cuda.bump.apply_plan import apply_plan
from pytorch_cuda.bump.base_digest import plan_bases
from pytorch_cuda.bump.bump_plan import BumpPlan, network_sources, plan_bump
from pytorch_cuda.bump.bump_policy import approved, parse_policy
from pytorch_cuda.bump.debian_plan import with_debian
from pytorch_cuda.bump.group_prs import GroupPullRequest, plan_pull_requests
from pytorch_cuda.bump.groups import Group, advisories_from, only
from pytorch_cuda.bump.plan_output import bump_exit_status, plan_json
from pytorch_cuda.bump.pr_body import pr_body, pypi_project_urls
from pytorch_cuda.bump.preview_plan import preview_plan
from pytorch_cuda.bump.record_debian import record_from_image
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.writing import LockChange
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.matrix.variants import select_variant
from pytorch_cuda.network.ca_bundle import find_ca_bundle
from pytorch_cuda.oci.image_config import resolve_tag


@dataclass(frozen=True)
class BumpRequest:
    """What `build.py bump` was asked: the checkout, which targets, how far the policy bends, what to write."""

    root: Path
    matrix: Path | None  # None: ROOT/matrix.yaml
    target: str | None  # None: every target
    dry_run: bool
    ignore_release_age: bool = False
    group: Group | None = None  # only this group's moves
    advisories: Path | None = None  # `build.py audit --json`'s output
    approve: tuple[str, ...] = ()  # held-back package pins moved past their rule
    pr_body: Path | None = None  # where the pull request's Markdown goes
    ca_bundle: Path | None = None


@dataclass(frozen=True)
class BumpOutcome:
    plan: BumpPlan
    changes: tuple[LockChange, ...]  # the locks written, or (dry run) those the preview wrote
    lock_diff: str  # a dry run's locks as a unified diff ("" otherwise)
    groups: tuple[GroupPullRequest, ...]  # each group's pull request this run
    document: dict[str, object]  # the bump as JSON (`--json`, the PR body's and the dashboard's input)

    @property
    def exit_status(self) -> int:
        return bump_exit_status(self.plan)


def run_bump(request: BumpRequest, log: Callable[[str], None]) -> BumpOutcome:
    """Plan the bump and write it (or preview it); ``log`` gets the progress lines."""
    path = request.matrix or request.root / "matrix.yaml"
    matrix = load_matrix(path)
    policy = approved(parse_policy(matrix.policy), list(request.approve))
    if request.ignore_release_age:
        policy = replace(policy, min_release_age=0)
    targets = [select_variant(matrix, request.target, None).target_name] if request.target else list(matrix.targets)
    ca = find_ca_bundle(request.ca_bundle)
    ca_path = ca.path if ca else None
    files, pins = network_sources(ca_path)
    log(f"{len(targets)} target(s): {', '.join(targets)}")
    bases, notes = plan_bases(matrix, policy, resolve_tag)
    plan = replace(plan_bump(matrix, policy, targets, files, pins, log=log), bases=tuple(bases))
    plan = with_debian(plan, [*notes], matrix, request.root, ca_path, log)
    advisories = advisories_from(_read_json(request.advisories)) if request.advisories else ()
    groups = plan_pull_requests(plan, advisories, audited=request.advisories is not None)
    if request.group:
        plan = only(plan, request.group, advisories)
        groups = tuple(group for group in groups if group.group == request.group)
    checked = [t.target for t in plan.targets if t.unreachable is None]
    changes: list[LockChange] = []
    diff = ""
    age = request.ignore_release_age
    if (plan.moved or plan.moved_bases) and request.dry_run:
        log("re-locking " + ", ".join(checked) + " in a scratch copy (a dry run writes nothing)")
        preview = preview_plan(plan, matrix, path, request.root, checked, ca_path, ignore_release_age=age)
        changes, diff = list(preview.changes), preview.diff
    elif plan.moved or plan.moved_bases:
        log("rewriting matrix.yaml, re-rendering images/ and re-locking " + ", ".join(checked))
        changes = apply_plan(plan, matrix, path, request.root, checked, ca_path, ignore_release_age=age)
    document = plan_json(plan, changes, dry_run=request.dry_run, advisories=advisories, groups=groups, lock_diff=diff)
    if request.pr_body:
        request.pr_body.write_text(pr_body(document, pypi_project_urls(ca_path)))
    return BumpOutcome(plan, tuple(changes), diff, tuple(groups), document)


@dataclass(frozen=True)
class RecordOutcome:
    path: Path  # images/debian-<base>.lock
    packages: int
    image: str


def record_debian(root: Path, matrix: Path | None, image: str) -> RecordOutcome:
    """`bump --record-debian IMAGE`: write images/debian-<base>.lock from the image's record of its packages."""
    from pytorch_cuda.engine.build_client import find_build_client
    from pytorch_cuda.engine.connection import connect
    from pytorch_cuda.engine.docker_engine import DockerEngine

    loaded = load_matrix(matrix or root / "matrix.yaml")
    path, count = record_from_image(DockerEngine(connect(), find_build_client()), loaded, image, root)
    return RecordOutcome(path, count, image)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UserError(
            cause=f"cannot read {path} as JSON ({error})", fix="pass the output of `build.py audit --json`"
        ) from None
