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
from pytorch_cuda.dependency_dashboard.group_boxes import OpenPullRequest, open_pull_requests
from pytorch_cuda.dependency_dashboard.page import dashboard_requests, missing_plan, render_page
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
        "start, each with the bump's flags).",
        epilog=examples(
            "dashboard --plan bump.json --out dashboard.md",
            "dashboard --plan bump.json --failed 'candidate build: https://example.org/run/1'",
            "dashboard --plan bump.json --open-prs open-prs.json --out dashboard.md",
            "dashboard --requests issue-body.md",
        ),
    )
    source = verb.add_mutually_exclusive_group(required=True)
    source.add_argument("--plan", type=Path, metavar="BUMP.json", help="the JSON of `build.py bump --dry-run --json`")
    source.add_argument("--requests", type=Path, metavar="BODY.md", help="a dashboard's body: print what it asks")
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
