"""The files `build.py audit` writes beside its answer: the findings as a CycloneDX 1.6 VEX document (a committed
triage decision as its vulnerability's analysis), that VEX put into an image's CycloneDX SBOM in place (the release
attests the SBOM with them), and the Markdown a pull request (the fixable findings) or an issue (the others)
carries."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytorch_cuda import __version__
from pytorch_cuda.audit.audit_markdown import markdown
from pytorch_cuda.audit.findings import AuditResult, Finding
from pytorch_cuda.audit.triage import Triage
from pytorch_cuda.errors import UserError
from pytorch_cuda_sbom.vex import VexEntry, embed, vex_document


@dataclass(frozen=True)
class AuditFiles:
    """Where the audit's files go (None: not written): --vex, --sbom, --markdown-pr, --markdown-issue."""

    vex: Path | None = None
    sbom: Path | None = None
    markdown_pr: Path | None = None
    markdown_issue: Path | None = None


def write_audit_files(result: AuditResult, triage: Triage, files: AuditFiles, now: datetime | None = None) -> None:
    """Write each file asked for; `now` stamps the VEX document (default: the current time, to the second)."""
    if files.vex or files.sbom:
        vex = audit_vex(result, triage, now or datetime.now(UTC))
        if files.vex:
            files.vex.parent.mkdir(parents=True, exist_ok=True)
            files.vex.write_text(json.dumps(vex, indent=2) + "\n", encoding="utf-8")
        if files.sbom:
            sbom = json.loads(_read(files.sbom))
            files.sbom.write_text(json.dumps(embed(sbom, vex), indent=2) + "\n", encoding="utf-8")
    for path, action in ((files.markdown_pr, "pull-request"), (files.markdown_issue, "issue")):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(markdown(result, action), encoding="utf-8")


def audit_vex(result: AuditResult, triage: Triage, now: datetime) -> dict[str, Any]:
    """The VEX document of every finding, the open ones and those a committed decision settled."""
    every = [*result.findings, *(f for f, _ in result.triaged)]
    entries = [
        VexEntry(f.purl, f.package, f.version, f.ids, f.fix_versions, f.description, f.source, _analysis(f, triage))
        for f in every
    ]
    stamp = now.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return vex_document(entries, __version__, stamp)


def _analysis(finding: Finding, triage: Triage) -> dict[str, str] | None:
    decision = triage.decision(finding.package, finding.ids)
    return decision.analysis() if decision else None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise UserError(cause=f"cannot read the SBOM {path} ({error.strerror})", fix="pass the image's SBOM") from None
