"""`build.py bump`: move matrix.yaml's pins to the newest versions its policy allows, re-lock and re-render."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytorch_cuda.bump.apply_plan import apply_plan
from pytorch_cuda.bump.base_digest import plan_bases
from pytorch_cuda.bump.bump_plan import network_sources, plan_bump
from pytorch_cuda.bump.bump_policy import approved, parse_policy
from pytorch_cuda.bump.debian_plan import with_debian
from pytorch_cuda.bump.group_prs import plan_pull_requests
from pytorch_cuda.bump.groups import GROUPS, advisories_from, only
from pytorch_cuda.bump.plan_output import (
    EXIT_REBUILD_NEEDED,
    bump_exit_status,
    group_lines,
    plan_json,
    print_plan,
)
from pytorch_cuda.bump.pr_body import pr_body, pypi_project_urls
from pytorch_cuda.bump.preview_plan import preview_plan
from pytorch_cuda.bump.record_debian import record_from_image
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.console.output import dumps, print_lock_changes
from pytorch_cuda.errors import EXIT_PARTIAL, UserError
from pytorch_cuda.locks.writing import LockChange
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.variants import select_variant
from pytorch_cuda.network.ca_bundle import find_ca_bundle
from pytorch_cuda.oci.image_config import resolve_tag


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "bump",
        parents=[shared.matrix, shared.common],
        help="move pins to the newest versions matrix.yaml's policy allows, then re-lock and re-render",
        description="Resolve, on each target's own index, the newest version of torch and of every Python package "
        "pin that matrix.yaml's `policy:` allows (not yanked, installable on the image's Python), and the digest "
        "a registry base's tag serves now; rewrite matrix.yaml, re-lock the variants that have a lock (parent, "
        "then child flavours), re-render, and print what moved and what the policy holds back. Compare the "
        "images' Debian packages (images/debian-BASE.lock) with Debian's archive. Exit 0 when nothing is to do; "
        f"{EXIT_REBUILD_NEEDED} when the images need a rebuild (a pin or digest moved, or Debian has a newer "
        f"package); {EXIT_PARTIAL} when a target's index was unreachable: that target is marked in the output (and in "
        "the JSON's targets, with the reason) and left out, the others are checked and, without --dry-run, "
        "bumped; 2 on a bad policy or archive, or when no target's index answers. Progress goes to stderr.",
        epilog=examples(
            "bump --target cu12 --dry-run",
            "bump --target cu12",
            "bump --dry-run --json",
            "bump --dry-run --json --advisories audit.json",
            "bump --group security --advisories audit.json",
            "bump --record-debian pytorch-cuda:v2.9",
        ),
    )
    verb.add_argument("--target", metavar="NAME", help="bump this target only (default: every target)")
    verb.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would move and the locks' changes (re-locked in a scratch copy, shown as a diff); write "
        "nothing",
    )
    verb.add_argument(
        "--ignore-release-age",
        action="store_true",
        help="move to releases younger than policy's min_release_age too (a security fix does not wait)",
    )
    verb.add_argument(
        "--group",
        choices=GROUPS,
        help="only this group's moves, for its own pull request: security (fixes an advisory of --advisories; "
        "Debian's newer packages when any is from -security), else the update's size, major, minor or patch "
        "(torch's pins with torch; the base's digest with patch)",
    )
    verb.add_argument(
        "--advisories",
        type=Path,
        metavar="AUDIT.json",
        help="the JSON of `build.py audit --json`: a move past a version it names as fixed is a security fix",
    )
    verb.add_argument(
        "--approve",
        action="append",
        default=[],
        metavar="PIN",
        help="move this held-back package pin (e.g. python_packages.numpy) past its policy rule for this run: what "
        "a ticked box of the dependency dashboard asks (repeatable)",
    )
    verb.add_argument(
        "--record-debian",
        metavar="IMAGE",
        help="write images/debian-BASE.lock from IMAGE's record of its Debian packages, then stop",
    )
    verb.add_argument(
        "--pr-body",
        type=Path,
        metavar="PATH",
        help="also write the pull request's Markdown body there: each move with its release notes (PyPI's "
        "project_urls), what is held back or waiting, the targets left out",
    )
    ca_bundle_option(verb)
    verb.set_defaults(run=bump)


def bump(args: argparse.Namespace, session: Session) -> int:
    matrix, root = session.matrix(args), session.root()
    if args.record_debian:
        return _record_debian(args.record_debian, matrix, root, session, as_json=args.json)

    def log(line: str) -> None:
        session.err.print(f"bump: {line}", highlight=False, markup=False)

    policy = approved(parse_policy(matrix.policy), args.approve)
    if args.ignore_release_age:
        policy = replace(policy, min_release_age=0)
    targets = [select_variant(matrix, args.target, None).target_name] if args.target else list(matrix.targets)
    ca = find_ca_bundle(args.ca_bundle)
    ca_path = ca.path if ca else None
    files, pins = network_sources(ca_path)
    log(f"{len(targets)} target(s): {', '.join(targets)}")
    bases, notes = plan_bases(matrix, policy, resolve_tag)
    plan = replace(plan_bump(matrix, policy, targets, files, pins, log=log), bases=tuple(bases))
    plan = with_debian(plan, [*notes], matrix, root, ca_path, log)
    advisories = advisories_from(_read_json(args.advisories)) if args.advisories else ()
    groups = plan_pull_requests(plan, advisories, audited=args.advisories is not None)
    if args.group:
        plan = only(plan, args.group, advisories)
        groups = tuple(group for group in groups if group.group == args.group)
    checked = [t.target for t in plan.targets if t.unreachable is None]
    changes: list[LockChange] = []
    diff = ""
    path = args.matrix or root / "matrix.yaml"
    if (plan.moved or plan.moved_bases) and args.dry_run:
        log("re-locking " + ", ".join(checked) + " in a scratch copy (a dry run writes nothing)")
        preview = preview_plan(plan, matrix, path, root, checked, ca_path, ignore_release_age=args.ignore_release_age)
        changes, diff = list(preview.changes), preview.diff
    elif plan.moved or plan.moved_bases:
        log("rewriting matrix.yaml, re-rendering images/ and re-locking " + ", ".join(checked))
        changes = apply_plan(plan, matrix, path, root, checked, ca_path, ignore_release_age=args.ignore_release_age)
    document = plan_json(plan, changes, dry_run=args.dry_run, advisories=advisories, groups=groups, lock_diff=diff)
    if args.pr_body:
        args.pr_body.write_text(pr_body(document, pypi_project_urls(ca_path)))
    if args.json:
        print(dumps(document))
    else:
        print_plan(session.out, plan, dry_run=args.dry_run)
        print_lock_changes(session.out, changes)
        if diff:
            session.out.print(diff, highlight=False, markup=False, end="")
        for line in group_lines(groups):
            session.out.print(line, highlight=False, markup=False)
    return bump_exit_status(plan)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UserError(
            cause=f"cannot read {path} as JSON ({error})", fix="pass the output of `build.py audit --json`"
        ) from None


def _record_debian(image: str, matrix: Matrix, root: Path, session: Session, *, as_json: bool) -> int:
    from pytorch_cuda.engine.build_client import find_build_client
    from pytorch_cuda.engine.connection import connect
    from pytorch_cuda.engine.docker_engine import DockerEngine

    path, count = record_from_image(DockerEngine(connect(), find_build_client()), matrix, image, root)
    if as_json:
        print(dumps({"record": str(path), "packages": count, "image": image}))
    else:
        session.out.print(f"{path.relative_to(root)}: {count} Debian packages of {image}", highlight=False)
    return 0
