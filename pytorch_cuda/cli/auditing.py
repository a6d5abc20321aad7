"""`build.py audit`: the security lane. Every lock against the Python advisory databases (pip-audit) and each
base's recorded Debian packages against Debian's `-security` suite; JSON, Markdown and CycloneDX VEX out."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytorch_cuda import __version__
from pytorch_cuda.audit.audit_markdown import markdown, summary_lines
from pytorch_cuda.audit.debian_audit import audit_debian
from pytorch_cuda.audit.findings import (
    AuditResult,
    Finding,
    apply_triage,
    python_findings,
    stale_decisions,
)
from pytorch_cuda.audit.fixing import apply_fixes
from pytorch_cuda.audit.lock_pins import read_all, unlocked
from pytorch_cuda.audit.python_audit import PYPI_JSON, Service, audit_pins, run_pip_audit
from pytorch_cuda.audit.triage import TRIAGE_FILE, Triage, load_triage
from pytorch_cuda.bump.simple_index import fetch_bytes
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.console.output import dumps, print_lock_changes
from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda.network.ca_bundle import find_ca_bundle
from pytorch_cuda_sbom.vex import VexEntry, embed, vex_document


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
    ca_bundle_option(verb)
    verb.set_defaults(run=audit)


def audit(args: argparse.Namespace, session: Session) -> int:
    root = session.root()

    def log(line: str) -> None:
        session.err.print(f"audit: {line}", highlight=False, markup=False)

    ca = find_ca_bundle(args.ca_bundle)
    ca_path = ca.path if ca else None
    locks = [p if p.is_absolute() else root / p for p in args.lock] if args.lock else None
    pins = read_all(root, locks)
    lock_names = tuple(dict.fromkeys(p.lock for p in pins))
    log(f"{len(pins)} pins in {len(lock_names)} locks")

    def fetch_json(url: str) -> Any:
        try:
            return json.loads(fetch_bytes(url, ca_path, accept="application/json")[1])
        except EngineError as exc:
            if getattr(exc.__cause__, "code", None) == 404:
                return None
            raise

    service = Service(args.service, args.osv_url, args.pypi_json)
    python = audit_pins(pins, service, run_pip_audit, fetch_json, log)
    findings = python_findings(python, pins)
    debian, notes = (0, []) if args.no_debian else audit_debian(session.matrix(args), root, ca_path, findings, log)
    triage = load_triage(args.triage or root / TRIAGE_FILE)
    open_findings, settled = apply_triage(findings, triage)
    notes += stale_decisions(findings, triage)
    notes += [] if locks else unlocked(session.matrix(args), root)
    result = AuditResult(
        tuple(open_findings), python.not_audited, lock_names, len(pins), python.audited, debian, tuple(notes),
        tuple(settled),
    )  # fmt: skip
    _write_outputs(args, result, triage)
    fixed = _fix(args, session, root, result, ca_path, log) if args.fix and result.findings else None
    if args.json:
        print(dumps(result.as_json() | ({"fixed": fixed} if fixed is not None else {})))
    else:
        for line in summary_lines(result):
            session.out.print(line, highlight=False, markup=False)
    return result.exit_status


def _fix(  # noqa: PLR0917 - the command's parts
    args: argparse.Namespace, session: Session, root: Path, result: AuditResult, ca: Path | None, log: Any
) -> dict[str, Any]:
    fixable = [f for f in result.findings if f.action == "pull-request" and f.ecosystem == "pypi"]
    moves, changes, notes = apply_fixes(args.matrix or root / "matrix.yaml", root, fixable, ca, log)
    if not args.json:
        print_lock_changes(session.out, changes)
    debian = [f.package for f in result.findings if f.ecosystem == "deb"]
    if debian:
        notes.append(
            f"Debian -security has newer {', '.join(debian)}: a rebuild from a fresh base takes them "
            "(the bump workflow, dispatched by the security lane)"
        )
    return {
        "pins": [
            {"pin": m.pin, "package": m.package, "old": m.old, "new": m.new, "advisory": m.advisory} for m in moves
        ],
        "locks": [{"lock": str(c.path), "changes": list(c.changes)} for c in changes],
        "notes": notes,
    }


def _write_outputs(args: argparse.Namespace, result: AuditResult, triage: Triage) -> None:
    if args.vex or args.sbom:
        every = [*result.findings, *(f for f, _ in result.triaged)]
        entries = [
            VexEntry(f.purl, f.package, f.version, f.ids, f.fix_versions, f.description, f.source, _analysis(f, triage))
            for f in every
        ]
        stamp = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        vex = vex_document(entries, __version__, stamp)
        if args.vex:
            args.vex.parent.mkdir(parents=True, exist_ok=True)
            args.vex.write_text(json.dumps(vex, indent=2) + "\n", encoding="utf-8")
        if args.sbom:
            sbom = json.loads(_read(args.sbom))
            args.sbom.write_text(json.dumps(embed(sbom, vex), indent=2) + "\n", encoding="utf-8")
    for path, action in ((args.markdown_pr, "pull-request"), (args.markdown_issue, "issue")):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(markdown(result, action), encoding="utf-8")


def _analysis(finding: Finding, triage: Triage) -> dict[str, str] | None:
    decision = triage.decision(finding.package, finding.ids)
    return decision.analysis() if decision else None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise UserError(cause=f"cannot read the SBOM {path} ({error.strerror})", fix="pass the image's SBOM") from None
