"""`build.py bump`: move matrix.yaml's pins to the newest versions its policy allows, re-lock and re-render."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytorch_cuda.bump.bump_flow import BumpRequest, record_debian, run_bump
from pytorch_cuda.bump.groups import GROUPS
from pytorch_cuda.bump.plan_output import EXIT_REBUILD_NEEDED, group_lines, print_plan
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.console.output import dumps, print_lock_changes
from pytorch_cuda.errors import EXIT_PARTIAL


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
    root = session.root()
    if args.record_debian:
        recorded = record_debian(root, args.matrix, args.record_debian)
        if args.json:
            print(dumps({"record": str(recorded.path), "packages": recorded.packages, "image": recorded.image}))
        else:
            where = recorded.path.relative_to(root)
            session.out.print(f"{where}: {recorded.packages} Debian packages of {recorded.image}", highlight=False)
        return 0

    def log(line: str) -> None:
        session.err.print(f"bump: {line}", highlight=False, markup=False)

    request = BumpRequest(
        root=root,
        matrix=args.matrix,
        target=args.target,
        dry_run=args.dry_run,
        ignore_release_age=args.ignore_release_age,
        group=args.group,
        advisories=args.advisories,
        approve=tuple(args.approve),
        pr_body=args.pr_body,
        ca_bundle=args.ca_bundle,
    )
    outcome = run_bump(request, log)
    if args.json:
        print(dumps(outcome.document))
    else:
        print_plan(session.out, outcome.plan, dry_run=args.dry_run)
        print_lock_changes(session.out, list(outcome.changes))
        if outcome.lock_diff:
            session.out.print(outcome.lock_diff, highlight=False, markup=False, end="")
        for line in group_lines(outcome.groups):
            session.out.print(line, highlight=False, markup=False)
    return outcome.exit_status
