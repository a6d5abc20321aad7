"""`build.py bump`: move matrix.yaml's pins to the newest versions its policy allows, re-lock and re-render."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from rich.console import Console
from rich.table import Table

from pytorch_cuda.bump.bump_plan import BumpPlan, network_sources, plan_bump
from pytorch_cuda.bump.policy import parse_policy
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.console.output import dumps, print_lock_changes
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.child_flavour import own_lock_path
from pytorch_cuda.locks.resolving import refresh_locks
from pytorch_cuda.locks.writing import LockChange, run_uv
from pytorch_cuda.matrix import load_matrix
from pytorch_cuda.probes.ca_bundle import find_ca_bundle
from pytorch_cuda.probes.index_probe import probe_index
from pytorch_cuda.render import render_all, write_rendered
from pytorch_cuda.variants import all_variants, select_variant


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "bump",
        parents=[shared.matrix, shared.common],
        help="move pins to the newest versions matrix.yaml's policy allows, then re-lock and re-render",
        description="Resolve, on each target's own index, the newest version of torch and of every Python package "
        "pin that matrix.yaml's `policy:` allows (not yanked, installable on the image's Python); rewrite "
        "matrix.yaml, re-lock the variants that have a lock (parent, then child flavours), re-render, and print "
        "what moved and what the policy holds back. Exit 0 when nothing is to do; 2 on a bad policy or index.",
        epilog=examples("bump --target cu12 --dry-run", "bump --target cu12", "bump --dry-run --json"),
    )
    verb.add_argument("--target", metavar="NAME", help="bump this target only (default: every target)")
    verb.add_argument("--dry-run", action="store_true", help="print what would move; write nothing")
    ca_bundle_option(verb)
    verb.set_defaults(run=bump)


def bump(args: argparse.Namespace, session: Session) -> int:
    matrix, root = session.matrix(args), session.root()
    policy = parse_policy(matrix.policy)
    targets = [select_variant(matrix, args.target, None).target_name] if args.target else list(matrix.targets)
    ca = find_ca_bundle(args.ca_bundle)
    ca_path = ca.path if ca else None
    files, pins = network_sources(ca_path)
    plan = plan_bump(matrix, policy, targets, files, pins)
    changes: list[LockChange] = []
    if plan.moved and not args.dry_run:
        path = args.matrix or root / "matrix.yaml"
        before = _snapshot(path, root)
        try:
            changes = _apply(plan, path, root, targets, ca_path)
        except UserError as error:
            _restore(before, root)
            raise type(error)(
                cause=f"{error.cause}; matrix.yaml and images/ are put back as they were", fix=error.fix
            ) from error
    if args.json:
        print(dumps(_as_json(plan, changes, dry_run=args.dry_run)))
    else:
        print_plan(session.out, plan, dry_run=args.dry_run)
        print_lock_changes(session.out, changes)
    return 0


def _apply(plan: BumpPlan, path: Path, root: Path, targets: list[str], ca: Path | None) -> list[LockChange]:
    """Rewrite matrix.yaml, render, re-lock the selected targets' locked variants (parent, then children)."""
    path.write_text(plan.rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    matrix = load_matrix(path)
    write_rendered(render_all(matrix, root / "templates"), root)
    locked = [v for v in all_variants(matrix) if v.target_name in targets and own_lock_path(root, v).exists()]
    roots = [v for v in locked if v.flavour.parent is None]
    changes: list[LockChange] = []
    if roots:
        changes, failures = refresh_locks(
            matrix, roots, root, ca_bundle=ca, probe=lambda i: probe_index(i, ca), run=_fresh_uv
        )
        if failures:
            raise failures[0]
    write_rendered(render_all(matrix, root / "templates", root), root)  # the locks' layer slices
    return changes


def _snapshot(matrix_path: Path, root: Path) -> dict[Path, bytes]:
    files = [matrix_path, *(p for p in (root / "images").rglob("*") if p.is_file())]
    return {path: path.read_bytes() for path in files}


def _restore(snapshot: dict[Path, bytes], root: Path) -> None:
    """Put matrix.yaml and images/ back as they were before a bump that failed half-way."""
    for path in (p for p in (root / "images").rglob("*") if p.is_file() and p not in snapshot):
        path.unlink()
    for path, data in snapshot.items():
        path.write_bytes(data)


def _fresh_uv(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """uv, told to refresh its cached index pages: the versions bump just found may be newer than them."""
    return run_uv([*argv, "--refresh"], env)


def _as_json(plan: BumpPlan, changes: list[LockChange], *, dry_run: bool) -> dict[str, object]:
    def row(move_path: str, old: str, new: str, why: str) -> dict[str, str]:
        return {"pin": move_path, "old": old, "new": new, "why": why}

    return {
        "dry_run": dry_run,
        "moved": [row(m.where, m.resolution.old, m.resolution.new, m.resolution.why) for m in plan.moved],
        "held_back": [
            {"pin": m.where, "current": m.resolution.new, "newest": m.resolution.held_back} for m in plan.held_back
        ],
        "yanked_skipped": [
            {"pin": m.where, "versions": list(m.resolution.yanked)} for m in plan.moves if m.resolution.yanked
        ],
        "locks": [{"path": str(c.path), "created": c.created, "changes": list(c.changes)} for c in changes],
    }


def print_plan(out: Console, plan: BumpPlan, *, dry_run: bool) -> None:
    if not plan.moved:
        out.print("nothing to bump: every pin is the newest version its policy allows")
    else:
        table = Table(title="would move (dry run)" if dry_run else "moved", title_justify="left")
        for column in ("package", "pin", "old", "new", "why allowed"):
            table.add_column(column)
        for move in plan.moved:
            r = move.resolution
            table.add_row(r.name, move.where, r.old, r.new, r.why)
        out.print(table)
    if plan.held_back:
        held = Table(title="held back by policy (never applied)", title_justify="left")
        for column in ("package", "pin", "kept", "newest on the index"):
            held.add_column(column)
        for move in plan.held_back:
            r = move.resolution
            held.add_row(r.name, move.where, r.new, r.held_back or "")
        out.print(held)
    for move in (m for m in plan.moves if m.resolution.yanked):
        out.print(f"skipped yanked: {move.resolution.name} {', '.join(move.resolution.yanked)}")
