"""`build.py bot ACTION`: what the bot's workflows do (bump.yml, security.yml), as commands (pytorch_cuda/bot/).

Each action maps its options to the bot room's functions and prints one line per thing it did; `--github-output
PATH` (GitHub Actions' $GITHUB_OUTPUT) also gets `key=value` lines for the jobs after it. The token comes from
GH_TOKEN (else GITHUB_TOKEN), the repository from --repo (else GITHUB_REPOSITORY)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path

from pytorch_cuda.bot import bump_bot
from pytorch_cuda.bot.bot_pull_request import Bot, PullRequestRequest, open_or_update
from pytorch_cuda.bot.branch_guard import Checkout, check, push
from pytorch_cuda.bot.github_rest import GitHub, from_environment
from pytorch_cuda.bot.security_bot import open_advisory_issues
from pytorch_cuda.bump.groups import GROUPS
from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.errors import EXIT_PARTIAL


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "bot",
        parents=[shared.common],
        help="what the bot's workflows do: plan the bump, open or close its pull requests, comment",
        description="The bot of bump.yml and security.yml (docs/bump.md): plan a bump run, commit to a bot branch "
        "and open or update its pull request (never over someone else's commits), close a pull request the "
        "default branch overtook, keep one comment or one labelled issue up to date. Exit 0 done (a blocked push "
        f"is a comment, not a failure); {EXIT_PARTIAL} (plan) a target's index did not answer; 2 bad input.",
        epilog=examples(
            "bot plan --out bump-output --group minor --advisories bump-output/audit.json",
            "bot open-group --group minor --base main --image ghcr.io/o/pytorch-cuda@sha256:... --from bump-output",
            "bot close-groups --groups 'minor patch' --base main",
            "bot issue --label dependency-dashboard --title 'Dependency dashboard' --body-file dashboard.md",
            "bot guard --check origin bump/pins-minor main bump@users.noreply.github.com",
        ),
    )
    actions = verb.add_subparsers(dest="action", required=True, metavar="ACTION")
    api = argparse.ArgumentParser(add_help=False)
    api.add_argument("--repo", metavar="OWNER/NAME", help="the repository (default: GITHUB_REPOSITORY)")
    api.add_argument("--api-url", metavar="URL", help="GitHub's REST API (default: GITHUB_API_URL, api.github.com)")
    api.add_argument("--github-output", type=Path, metavar="PATH", help="also write key=value lines there")
    git = argparse.ArgumentParser(add_help=False, parents=[api])
    git.add_argument("--remote", default="origin", metavar="URL", help="where the bot pushes (default: origin)")
    git.add_argument("--base", required=True, metavar="BRANCH", help="the default branch")
    git.add_argument("--bot-name", default="pytorch-cuda bump", metavar="NAME", help="the bot's commit name")
    git.add_argument("--bot-email", default="bump@users.noreply.github.com", metavar="EMAIL", help="its email")

    plan = actions.add_parser("plan", parents=[shared.common], help="bump.yml's planning step or a group's bump")
    plan.add_argument("--out", type=Path, required=True, metavar="DIR", help="bump.json, body.md, pins.patch")
    plan.add_argument(
        "--group", choices=(*GROUPS, ""), default="", help="a group run: write this group's moves (empty: plan all)"
    )
    plan.add_argument(
        "--ignore-release-age", choices=("true", "false", ""), default="", help="the workflow input (empty: false)"
    )
    plan.add_argument("--approve", default="", metavar="'PIN ...'", help="held-back pins to move, space-separated")
    plan.add_argument("--advisories", type=Path, metavar="AUDIT.json", help="used when the file is there, not empty")
    plan.add_argument("--github-output", type=Path, metavar="PATH", help="rebuild=, update=, close= lines")
    plan.add_argument("--summary", type=Path, metavar="PATH", help="append the pull request's body (a job summary)")
    plan.set_defaults(run=_plan)

    group = actions.add_parser("open-group", parents=[shared.common, git], help="a group's pull request")
    group.add_argument("--group", choices=GROUPS, required=True)
    group.add_argument("--image", required=True, metavar="REF@DIGEST", help="the candidate that passed")
    group.add_argument(
        "--from", dest="source", type=Path, required=True, metavar="DIR", help="body.md, pins.patch, bump.json"
    )
    group.set_defaults(run=_open_group)

    close = actions.add_parser("close-groups", parents=[shared.common, git], help="close overtaken group PRs")
    close.add_argument("--groups", required=True, metavar="'GROUP ...'", help="space-separated")
    close.set_defaults(run=_close_groups)

    opened = actions.add_parser("open", parents=[shared.common, git], help="commit to a branch, open or update")
    opened.add_argument("--branch", required=True)
    opened.add_argument("--title", required=True)
    opened.add_argument("--body-file", type=Path, required=True, metavar="PATH")
    opened.add_argument("--commit-message", required=True, metavar="TEXT")
    opened.add_argument("--path", action="append", required=True, metavar="PATH", help="what to commit (repeatable)")
    opened.add_argument("--label", action="append", default=[], metavar="NAME", help="(repeatable)")
    opened.add_argument("--blocked-note-file", type=Path, metavar="PATH", help="added to a blocked push's comment")
    opened.set_defaults(run=_open)

    comment = actions.add_parser("gpu-comment", parents=[shared.common, api], help="the GPU fleet's one comment")
    comment.add_argument("--pr", type=int, required=True, metavar="NUMBER")
    comment.add_argument("--diffs", type=Path, required=True, metavar="DIR", help="RUNNER/diff.md of each runner")
    comment.add_argument("--gpu-result", required=True, metavar="RESULT", help="the gpu jobs' result")
    comment.add_argument("--fallback", required=True, metavar="PATH", help="the diff's OLD without a store")
    comment.add_argument("--html-url", default="", metavar="URL", help="the HTML pages' artifact")
    comment.set_defaults(run=_gpu_comment)

    issue = actions.add_parser("issue", parents=[shared.common, api], help="one labelled issue, rewritten")
    issue.add_argument("--label", required=True)
    issue.add_argument("--title", required=True)
    issue.add_argument("--body-file", type=Path, required=True, metavar="PATH")
    issue.set_defaults(run=_issue)

    advisories = actions.add_parser("advisory-issues", parents=[shared.common, api], help="security.yml's issues")
    advisories.add_argument("--audit", type=Path, required=True, metavar="AUDIT.json", help="`build.py audit --json`")
    advisories.set_defaults(run=_advisory_issues)

    failed = actions.add_parser("failed-runs", parents=[shared.common, api], help="groups whose last run failed")
    failed.add_argument("--workflow", default="bump.yml", metavar="FILE", help="whose group runs (default: bump.yml)")
    failed.add_argument("--job", action="append", default=[], metavar="NAME=RESULT", help="this run's jobs too")
    failed.add_argument("--run-url", default="", metavar="URL", help="this run, linked from its failed jobs")
    failed.set_defaults(run=_failed_runs)

    listed = actions.add_parser("open-prs", parents=[shared.common, api], help="the open pull requests, as JSON")
    listed.set_defaults(run=_open_prs)

    guard = actions.add_parser("guard", parents=[shared.common], help="push HEAD to a bot branch, guarded")
    guard.add_argument("--check", action="store_true", help="push nothing: may its pull request be closed?")
    for name in ("remote", "branch", "base", "bot_email"):
        guard.add_argument(name)
    guard.set_defaults(run=_guard)


def _say(session: Session, line: str) -> None:
    session.out.print(line, highlight=False, markup=False)


def _outputs(path: Path | None, values: Mapping[str, str]) -> None:
    if path is not None:
        with path.open("a", encoding="utf-8") as out:
            out.writelines(f"{key}={value}\n" for key, value in values.items())


def _checkout(args: argparse.Namespace) -> tuple[Checkout, GitHub, Bot]:
    github = from_environment(args.repo, args.api_url)
    remote = args.remote
    if remote == "origin":  # the runner's clone: checkout persisted no credentials, the header carries the token
        remote = f"{github.server_url()}/{github.repo}.git"
    return Checkout(Path.cwd(), remote, github.token), github, Bot(args.bot_name, args.bot_email)


def _plan(args: argparse.Namespace, session: Session) -> int:
    def log(line: str) -> None:
        session.err.print(f"bump: {line}", highlight=False, markup=False)

    done = bump_bot.plan_run(
        session.root(), args.out, args.group or None, args.ignore_release_age == "true", tuple(args.approve.split()),
        args.advisories, log,
    )  # fmt: skip
    if done.unreachable:
        _say(session, f"::warning::partial bump: not checked (index unreachable): {', '.join(done.unreachable)}")
    _outputs(args.github_output, done.outputs())
    if args.summary is not None:
        with args.summary.open("a", encoding="utf-8") as summary:
            summary.write((args.out / "body.md").read_text(encoding="utf-8"))
    _say(session, " ".join(f"{key}={value}" for key, value in done.outputs().items()))
    return 0  # 3 (rebuild needed) and 4 (partial) are outputs and warnings here, not failures


def _open_group(args: argparse.Namespace, session: Session) -> int:
    checkout, github, bot = _checkout(args)
    outcome = bump_bot.open_group(checkout, github, bot, args.group, args.base, args.source, args.image)
    return _opened(args, session, outcome.action, outcome.number)


def _open(args: argparse.Namespace, session: Session) -> int:
    checkout, github, bot = _checkout(args)
    note = args.blocked_note_file.read_text(encoding="utf-8") if args.blocked_note_file else ""
    request = PullRequestRequest(
        branch=args.branch, base=args.base, title=args.title, body=args.body_file.read_text(encoding="utf-8"),
        commit_message=args.commit_message, paths=tuple(args.path), labels=tuple(args.label), blocked_note=note,
    )  # fmt: skip
    outcome = open_or_update(checkout, github, bot, request)
    return _opened(args, session, outcome.action, outcome.number)


def _opened(args: argparse.Namespace, session: Session, action: str, number: int | None) -> int:
    if action == "unchanged":
        _say(session, "::warning::nothing to commit: the change left no file different from the base")
    elif action == "declined":
        _say(session, f"::notice::#{number}, closed by a person, carried this same content: not opened again")
    elif action == "blocked":
        _say(session, "::warning::the branch has someone else's commits; commented instead of pushing")
    _say(session, f"pull request: {action}" + (f" #{number}" if number else ""))
    pushed = action in ("created", "updated")  # a blocked or declined one gets no GPU comment: none of this run's
    _outputs(args.github_output, {"number": str(number) if pushed and number else "", "action": action})
    return 0


def _close_groups(args: argparse.Namespace, session: Session) -> int:
    checkout, github, bot = _checkout(args)
    groups = [g for g in args.groups.split() if g in GROUPS]
    for group, closing in bump_bot.close_groups(checkout, github, bot, groups, args.base).items():
        _say(session, f"group {group}: {closing}")
    return 0


def _gpu_comment(args: argparse.Namespace, session: Session) -> int:
    text = bump_bot.gpu_comment(args.diffs, args.gpu_result, args.fallback, args.html_url or None)
    done = from_environment(args.repo, args.api_url).upsert_comment(args.pr, bump_bot.GPU_MARKER, text)
    _say(session, f"GPU results comment on #{args.pr}: {done}")
    return 0


def _issue(args: argparse.Namespace, session: Session) -> int:
    github = from_environment(args.repo, args.api_url)
    body = args.body_file.read_text(encoding="utf-8")
    github.ensure_label(args.label)
    number = github.labelled_issue(args.label)
    if number is None:
        number = github.create_issue(args.title, body, (args.label,))
        _say(session, f"opened #{number}")
    else:
        github.edit_issue(number, body)
        _say(session, f"rewrote #{number}")
    _outputs(args.github_output, {"number": str(number)})
    return 0


def _advisory_issues(args: argparse.Namespace, session: Session) -> int:
    audit = json.loads(args.audit.read_text(encoding="utf-8"))
    for line in open_advisory_issues(from_environment(args.repo, args.api_url), audit):
        _say(session, line)
    return 0


def _failed_runs(args: argparse.Namespace, session: Session) -> int:
    """One line per failure for the dashboard: this run's failed jobs, then each group whose latest run failed."""
    jobs = [job.rpartition("=") for job in args.job]
    lines = [f"{name}: failed ({args.run_url})" for name, _, result in jobs if result == "failure"]
    lines += bump_bot.failed_group_runs(from_environment(args.repo, args.api_url).workflow_runs(args.workflow))
    print("\n".join(lines) if lines else "", end="\n" if lines else "")
    return 0


def _open_prs(args: argparse.Namespace, session: Session) -> int:
    """The repository's open pull requests for the dashboard's --open-prs (number, title, url, headRefName)."""
    print(json.dumps(from_environment(args.repo, args.api_url).open_pulls(), indent=1))
    return 0


def _guard(args: argparse.Namespace, session: Session) -> int:
    """scripts/push-bot-branch.sh's interface: exit 0 pushed (or closable), 3 someone else's commits (listed)."""
    checkout = Checkout(Path.cwd(), args.remote)
    guarded = (check if args.check else push)(checkout, args.branch, args.base, args.bot_email)
    for sha in guarded.updates:
        session.err.print(f'bot guard: {sha[:12]} is an update from {args.base} ("Update branch"); going on over it')
    if guarded.others:
        print("\n".join(commit.line() for commit in guarded.others))
        session.err.print(f"bot guard: {args.branch} has commits by someone else; not pushing over them")
        return 3
    session.err.print(f"bot guard: {args.branch}: {guarded.verdict}", highlight=False)
    return 0
