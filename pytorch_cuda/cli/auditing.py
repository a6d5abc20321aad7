"""`build.py audit`: the security lane. Every lock against the Python advisory databases (pip-audit) and each
base's recorded Debian packages against Debian's `-security` suite; JSON, Markdown and CycloneDX VEX out."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytorch_cuda.audit.audit_files import AuditFiles
from pytorch_cuda.audit.audit_flow import AuditRequest, run_audit
from pytorch_cuda.audit.audit_markdown import lane_outputs, lane_summary, summary_lines
from pytorch_cuda.audit.python_audit import PYPI_JSON, Service
from pytorch_cuda.audit.triage import TRIAGE_FILE
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.console.github_step import append_step_summary, write_step_outputs
from pytorch_cuda.console.output import dumps, print_lock_changes


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "audit",
        parents=[shared.matrix, shared.common],
        help="check every lock against the Python advisory databases and the Debian packages against -security",
        description="Read every lock (images/*/requirements*.lock, images/installer.lock, images/sbom-tool.lock, "
        "requirements/*.txt) and look each pinned version up with pip-audit (PyPI's advisory JSON, or OSV); a "
        "version that service cannot answer for is looked up in PyPI's project JSON when it is the project's "
        "newest release, else listed as not audited. Compare each base's recorded Debian packages "
        "(images/debian-BASE.lock) with the base's -security suite. Exit 0: no finding; 1: findings (each with "
        "its action: pull-request where a fixed version exists, issue where none does); 4: no finding, but some "
        "pins were not audited; 2: bad input, or no advisory service answers. Progress goes to stderr.",
        epilog=examples(
            "audit",
            "audit --json --vex audit/vex.cdx.json",
            "audit --markdown-pr pr.md --markdown-issue issue.md",
            "audit --service osv --osv-url http://127.0.0.1:8080/v1/query",
        ),
    )
    verb.add_argument("--service", choices=("pypi", "osv"), default="pypi", help="pip-audit's advisory service")
    verb.add_argument("--osv-url", metavar="URL", help="an OSV-compatible /v1/query URL (with --service osv)")
    verb.add_argument("--pypi-json", metavar="URL", default=PYPI_JSON, help=f"PyPI's JSON API (default {PYPI_JSON})")
    verb.add_argument("--lock", action="append", type=Path, metavar="PATH", help="audit this lock only (repeatable)")
    verb.add_argument("--no-debian", action="store_true", help="leave the Debian -security check out")
    verb.add_argument(
        "--fix",
        action="store_true",
        help="apply the fixes that exist: move matrix.yaml's pins to the lowest fixed version, re-lock the images "
        "(newest transitive versions) and the host tools a finding names; no release-age gate",
    )
    verb.add_argument("--vex", type=Path, metavar="PATH", help="write the findings as a CycloneDX 1.6 VEX document")
    verb.add_argument(
        "--sbom",
        type=Path,
        metavar="PATH",
        help="also put the VEX's vulnerabilities into this CycloneDX SBOM (in place), on the components it lists: "
        "the release attests the SBOM with them",
    )
    verb.add_argument(
        "--triage",
        type=Path,
        metavar="PATH",
        help=f"the committed triage decisions the VEX reads (default: ROOT/{TRIAGE_FILE})",
    )
    verb.add_argument("--markdown-pr", type=Path, metavar="PATH", help="write the fixable findings as Markdown")
    verb.add_argument("--markdown-issue", type=Path, metavar="PATH", help="write the unfixable findings as Markdown")
    verb.add_argument(
        "--github-output",
        type=Path,
        metavar="FILE",
        help="also append the counts fixable, debian and unfixable to FILE (a workflow step's outputs)",
    )
    verb.add_argument("--summary", type=Path, metavar="FILE", help="also append both Markdown bodies to FILE")
    ca_bundle_option(verb)
    verb.set_defaults(run=audit, refuse=unused_service_url)


def unused_service_url(args: argparse.Namespace) -> str | None:
    """--osv-url names the service of --service osv only: with pypi it would be ignored."""
    if args.osv_url is not None and args.service != "osv":
        return (
            f"--osv-url {args.osv_url} is used only with --service osv, and the service is {args.service}: pass "
            "--service osv with it, or leave --osv-url out"
        )
    return None


def audit(args: argparse.Namespace, session: Session) -> int:
    def log(line: str) -> None:
        session.err.print(f"audit: {line}", highlight=False, markup=False)

    request = AuditRequest(
        root=session.root(),
        matrix=args.matrix,
        locks=tuple(args.lock) if args.lock else None,
        service=Service(args.service, args.osv_url, args.pypi_json),
        debian=not args.no_debian,
        triage=args.triage,
        files=AuditFiles(args.vex, args.sbom, args.markdown_pr, args.markdown_issue),
        fix=args.fix,
        ca_bundle=args.ca_bundle,
    )
    outcome = run_audit(request, log)
    result, fixed = outcome.result, outcome.fixed
    if args.github_output is not None:
        write_step_outputs(args.github_output, lane_outputs(result))
    if args.summary is not None:
        append_step_summary(args.summary, lane_summary(result))
    if fixed is not None and not args.json:
        print_lock_changes(session.out, list(fixed.changes))
    if args.json:
        print(dumps(result.as_json() | ({"fixed": fixed.as_json()} if fixed is not None else {})))
    else:
        for line in summary_lines(result):
            session.out.print(line, highlight=False, markup=False)
    return result.exit_status
