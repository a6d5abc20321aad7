"""`build.py dashboard`: the dependency dashboard's Markdown, from a bump's JSON (`build.py bump --dry-run
--json`), and the requests its ticked boxes make (`--requests BODY.md`: the runs to start and the bump's flags, as
JSON)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.output import dumps
from pytorch_cuda.dependency_dashboard.group_boxes import LOCK_MAINTENANCE, OpenPullRequest, open_pull_requests
from pytorch_cuda.dependency_dashboard.page import dashboard_requests, missing_plan, render_page
from pytorch_cuda.dependency_dashboard.pull_request_hygiene import (
    decision,
    group_pull_request,
    lock_maintenance_pull_request,
)
from pytorch_cuda.errors import UserError


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "dashboard",
        parents=[shared.common],
        help="the dependency dashboard (an issue's Markdown) from a bump's JSON, or what its ticked boxes ask",
        description="Render the dependency dashboard, one issue that bump.yml keeps up to date: pending moves, "
        "pins held back (with the rule that holds each), releases waiting for min_release_age, targets whose "
        "index did not answer, and what failed, with checkboxes that ask the next bump for a rebase, the "
        "waiting releases or a held-back pin, and one box per group (security, major, minor, patch, lock "
        "maintenance) that starts that group's run; with --open-prs, the bot's open pull requests (docs/bump.md). "
        "A --plan file that does not exist is allowed with --failed (the bump job failed: the page says so). "
        "With --requests: read a dashboard's body and print what its ticked boxes ask, as JSON (the runs to "
        "start, each with the bump's flags). With --pull-request KIND: what the bot's pull request of a group "
        "(with --plan) or of lock maintenance (with --locks) carries, its labels and body marker, and, with "
        "--closed, whether a person closed one with the same content (then it is not opened again), as JSON.",
        epilog=examples(
            "dashboard --plan bump.json --out dashboard.md",
            "dashboard --plan bump.json --failed 'candidate build: https://example.org/run/1'",
            "dashboard --plan bump.json --open-prs open-prs.json --out dashboard.md",
            "dashboard --requests issue-body.md",
            "dashboard --pull-request patch --plan bump.json --closed closed.json",
            "dashboard --pull-request lock-maintenance --locks locks.json --closed closed.json",
        ),
    )
    source = verb.add_mutually_exclusive_group(required=True)
    source.add_argument("--plan", type=Path, metavar="BUMP.json", help="the JSON of `build.py bump --dry-run --json`")
    source.add_argument("--requests", type=Path, metavar="BODY.md", help="a dashboard's body: print what it asks")
    source.add_argument("--locks", type=Path, metavar="LOCKS.json", help="with --pull-request lock-maintenance: the "
                        "JSON of `build.py lock --upgrade --json`")  # fmt: skip
    verb.add_argument(
        "--pull-request",
        metavar="KIND",
        help="a group (security, major, minor, patch; with --plan) or lock-maintenance (with --locks): print its "
        "pull request's labels, content key and body marker, and whether a person closed the same content",
    )
    verb.add_argument(
        "--closed",
        type=Path,
        metavar="CLOSED.json",
        help="with --pull-request: its branch's closed pull requests "
        "(`gh pr list --state closed --head BRANCH --json number,url,title,body,mergedAt`)",
    )
    verb.add_argument("--failed", action="append", default=[], metavar="TEXT", help="a failure to list (repeatable)")
    verb.add_argument(
        "--open-prs",
        type=Path,
        metavar="PRS.json",
        help="the bot's open pull requests to list: `gh pr list --state open --json number,title,url,headRefName`",
    )
    verb.add_argument("--made-by", default="", metavar="TEXT", help="what made this dashboard (e.g. the run's link)")
    verb.add_argument("--out", type=Path, metavar="PATH", help="write the Markdown there instead of stdout")
    verb.set_defaults(run=dashboard)


def dashboard(args: argparse.Namespace, session: Session) -> int:
    if args.requests:
        print(dumps(dashboard_requests(_read(args.requests))))
        return 0
    if args.pull_request or args.locks or args.closed:
        print(dumps(_pull_request(args)))
        return 0
    plan = _plan(args.plan) if args.plan.exists() else missing_plan(args.failed)
    body = render_page(plan, failed=args.failed, run=args.made_by, open_prs=_open_prs(args.open_prs))
    if args.out:
        args.out.write_text(body, encoding="utf-8")
    elif args.json:
        print(dumps({"body": body}))
    else:
        print(body, end="")
    return 0


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise UserError(cause=f"cannot read {path} ({error.strerror})", fix="pass a file that exists") from None


def _pull_request(args: argparse.Namespace) -> dict[str, Any]:
    """The bot's pull request of a group (from --plan) or of lock maintenance (from --locks), and its fate."""
    kind = args.pull_request
    if kind is None or (kind == LOCK_MAINTENANCE) != (args.locks is not None):
        raise UserError(
            cause="--locks and --closed go with --pull-request, lock-maintenance with --locks and a group with --plan",
            fix="e.g. `dashboard --pull-request patch --plan bump.json --closed closed.json`, or "
            "`dashboard --pull-request lock-maintenance --locks locks.json`",
        )
    if kind == LOCK_MAINTENANCE:
        locks = _json(args.locks, "the output of `build.py lock --upgrade --json`")
        if not isinstance(locks, list) or not all(isinstance(lock, dict) for lock in locks):
            raise UserError(cause=f"{args.locks} is not a list of locks", fix="pass `build.py lock --upgrade --json`")
        pull = lock_maintenance_pull_request(locks)
    else:
        pull = group_pull_request(_plan(args.plan), kind)
    closed = _json(args.closed, "the output of `gh pr list --state closed --json number,url,title,body,mergedAt`")
    return decision(pull, closed if args.closed else None)


def _json(path: Path | None, what: str) -> object:
    if path is None:
        return None
    try:
        found: object = json.loads(_read(path))
    except ValueError as error:
        raise UserError(cause=f"{path} is not JSON ({error})", fix=f"pass {what}") from None
    return found


def _open_prs(path: Path | None) -> list[OpenPullRequest] | None:
    if path is None:
        return None
    try:
        return open_pull_requests(json.loads(_read(path)))
    except ValueError as error:
        raise UserError(
            cause=f"{path} is not JSON ({error})",
            fix="pass the output of `gh pr list --state open --json number,title,url,headRefName`",
        ) from None


def _plan(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(_read(path))
    except ValueError as error:
        raise UserError(
            cause=f"{path} is not JSON ({error})", fix="pass the output of `build.py bump --dry-run --json`"
        ) from None
    if not isinstance(found, dict) or "result" not in found:
        raise UserError(
            cause=f"{path} is not a bump's JSON (it has no result)",
            fix="pass the output of `build.py bump --dry-run --json`",
        )
    return found
