"""What `build.py bump` prints: the moves, what policy holds back, the base, Debian's updates and the result; or
the same as JSON. Exit status: 0 when nothing is to do, EXIT_REBUILD_NEEDED when the images should be rebuilt."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from pytorch_cuda.bump.bump_plan import BumpPlan
from pytorch_cuda.bump.group_prs import GroupPullRequest
from pytorch_cuda.bump.groups import PinAdvisory, fixes, group_of
from pytorch_cuda.errors import EXIT_PARTIAL
from pytorch_cuda.locks.writing import LockChange

EXIT_REBUILD_NEEDED = 3


def bump_exit_status(plan: BumpPlan) -> int:
    """4 when part of the run could not be checked (it outranks 3: the JSON's "result" says the rest); 3 when
    the images need a rebuild; 0 when nothing is to do."""
    if plan.partial:
        return EXIT_PARTIAL
    return EXIT_REBUILD_NEEDED if plan.rebuild_needed else 0


NOTHING = "nothing to bump: every pin is the newest version its policy allows"


def short(digest: str) -> str:
    """sha256:<12 hex>... for the table (the JSON and matrix.yaml carry it whole)."""
    return digest[:19] + "..." if digest.startswith("sha256:") else digest


def result_line(plan: BumpPlan) -> str:
    if not plan.rebuild_needed:
        line = "result: current (no pin or base digest moved, no newer Debian package): nothing to rebuild"
        return line + (" -- partial: see what was not checked above" if plan.partial else "")
    security = sum(update.security for update in plan.debian)
    parts = [
        f"{len(plan.moved)} pin(s) moved" if plan.moved else "",
        f"{len(plan.moved_bases)} base digest(s) moved" if plan.moved_bases else "",
        f"{len(plan.debian)} newer Debian package(s), {security} from -security" if plan.debian else "",
    ]
    line = "result: rebuild needed (" + "; ".join(part for part in parts if part) + ")"
    return line + (" -- partial: see what was not checked above" if plan.partial else "")


def print_plan(out: Console, plan: BumpPlan, *, dry_run: bool) -> None:
    if not plan.moved and not plan.moved_bases:
        out.print(NOTHING, highlight=False)
    else:
        table = Table(title="would move (dry run)" if dry_run else "moved", title_justify="left")
        for column in ("package", "pin", "old", "new", "why allowed"):
            table.add_column(column)
        for move in plan.moved:
            r = move.resolution
            table.add_row(r.name, move.where, r.old, r.new, r.why)
        for base in plan.moved_bases:
            table.add_row(f"base {base.base}", f"bases.{base.base}.digest", short(base.old), short(base.new), base.why)
        out.print(table)
    held_bases = [base for base in plan.bases if base.held_back]
    if plan.held_back or held_bases:
        held = Table(title="held back by policy (never applied)", title_justify="left")
        for column in ("package", "pin", "kept", "newest on the index"):
            held.add_column(column)
        for move in plan.held_back:
            r = move.resolution
            held.add_row(r.name, move.where, r.new, r.held_back or "")
        for base in held_bases:
            held.add_row(f"base {base.base}", f"bases.{base.base}.digest", short(base.old), short(base.new))
        out.print(held)
    for move in (m for m in plan.moves if m.resolution.yanked):
        out.print(f"skipped yanked: {move.resolution.name} {', '.join(move.resolution.yanked)}", highlight=False)
    for move in (m for m in plan.moves if m.resolution.too_new):
        versions = ", ".join(move.resolution.too_new)
        out.print(f"waiting for min_release_age: {move.resolution.name} {versions}", highlight=False)
    unreachable = [t for t in plan.targets if t.unreachable]
    for check in unreachable:
        out.print(f"target {check.target}: not checked: {check.unreachable}", style="red", highlight=False)
    for line in (*plan.notes, *(update.line for update in plan.debian), result_line(plan)):
        out.print(line, highlight=False, markup=False)


def group_lines(groups: Sequence[GroupPullRequest]) -> list[str]:
    """One line per group's pull request: its branch, what this run does with it and why."""
    return [f"group {g.group} ({g.branch}): {g.action}: {g.why}" for g in groups]


def plan_json(
    plan: BumpPlan,
    changes: list[LockChange],
    *,
    dry_run: bool,
    advisories: Sequence[PinAdvisory] = (),
    groups: Sequence[GroupPullRequest] = (),
    lock_diff: str = "",
) -> dict[str, object]:
    """The bump as JSON; `groups`: each group's pull request this run (the whole bump's; one with --group);
    `lock_diff`: the locks' unified diff (a dry run's preview of what the real bump writes)."""

    def row(move_path: str, old: str, new: str, why: str) -> dict[str, str]:
        return {"pin": move_path, "old": old, "new": new, "why": why}

    return {
        "dry_run": dry_run,
        "result": "rebuild needed" if plan.rebuild_needed else "current",
        "partial": plan.partial,
        "targets": [
            {"target": t.target, "index": t.index, "checked": t.unreachable is None, "unreachable": t.unreachable}
            for t in plan.targets
        ],
        "moved": [
            row(m.where, m.resolution.old, m.resolution.new, m.resolution.why)
            | {"group": group_of(m, plan, advisories), "fixes": list(fixes(m, plan, advisories))}
            for m in plan.moved
        ],
        "groups": [group.as_json() for group in groups],
        "held_back": [
            {"pin": m.where, "current": m.resolution.new, "newest": m.resolution.held_back, "rule": m.resolution.rule}
            for m in plan.held_back
        ],
        "yanked_skipped": [
            {"pin": m.where, "versions": list(m.resolution.yanked)} for m in plan.moves if m.resolution.yanked
        ],
        "too_new": [
            {"pin": m.where, "versions": list(m.resolution.too_new)} for m in plan.moves if m.resolution.too_new
        ],
        "bases": [
            {
                "base": b.base,
                "tag": b.upstream_tag,
                "old": b.old,
                "new": b.new,
                "moved": b.moved,
                "held_back": b.held_back,
                "why": b.why,
            }
            for b in plan.bases
        ],
        "debian_updates": [
            {"package": u.package, "old": u.old, "new": u.new, "suite": u.suite, "security": u.security}
            for u in plan.debian
        ],
        "notes": list(plan.notes),
        "locks": [{"path": str(c.path), "created": c.created, "changes": list(c.changes)} for c in changes],
        "lock_diff": lock_diff,
    }
