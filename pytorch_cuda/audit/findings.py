"""What the audit found, where, and what the security lane does about it: a pull request where a fixed version
exists (a Python fix release, a Debian `-security` update), an issue where none does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytorch_cuda.audit.lock_pins import LockedPin
from pytorch_cuda.audit.python_audit import PythonAudit
from pytorch_cuda.audit.triage import SETTLED, Decision, Triage
from pytorch_cuda.bump.debian_archive import DebianUpdate
from pytorch_cuda.errors import EXIT_PARTIAL

Action = Literal["pull-request", "issue"]
EXIT_CLEAN = 0
EXIT_FINDINGS = 1  # like failed checks: the lane opens a pull request or an issue


@dataclass(frozen=True)
class Finding:
    ecosystem: Literal["pypi", "deb"]
    package: str
    version: str
    ids: tuple[str, ...]  # the advisory's id and aliases (Debian: the suite the fix is in)
    fix_versions: tuple[str, ...]
    description: str
    source: str
    locks: tuple[str, ...]  # where the version is pinned (relative paths)

    @property
    def action(self) -> Action:
        return "pull-request" if self.fix_versions else "issue"

    @property
    def purl(self) -> str:
        if self.ecosystem == "deb":
            return f"pkg:deb/debian/{self.package}@{self.version}?arch=amd64"
        return f"pkg:pypi/{self.package}@{self.version}"

    def as_json(self) -> dict[str, Any]:
        return {
            "ecosystem": self.ecosystem,
            "package": self.package,
            "version": self.version,
            "id": self.ids[0],
            "aliases": list(self.ids[1:]),
            "fix_versions": list(self.fix_versions),
            "action": self.action,
            "description": self.description,
            "source": self.source,
            "locks": list(self.locks),
        }


@dataclass(frozen=True)
class AuditResult:
    findings: tuple[Finding, ...]
    not_audited: tuple[tuple[str, str, str], ...]
    locks: tuple[str, ...]
    pins: int
    audited: int
    debian_packages: int
    notes: tuple[str, ...] = ()
    triaged: tuple[tuple[Finding, Decision], ...] = ()  # settled by a committed decision (vex-triage.yaml)

    @property
    def exit_status(self) -> int:
        if self.findings:
            return EXIT_FINDINGS
        return EXIT_PARTIAL if self.not_audited else EXIT_CLEAN

    def as_json(self) -> dict[str, Any]:
        return {
            "result": "findings" if self.findings else ("partial" if self.not_audited else "clean"),
            "locks": list(self.locks),
            "pins": self.pins,
            "audited": self.audited,
            "debian_packages": self.debian_packages,
            "findings": [f.as_json() for f in self.findings],
            "pull_request": [f.ids[0] for f in self.findings if f.action == "pull-request"],
            "issue": [f.ids[0] for f in self.findings if f.action == "issue"],
            "not_audited": [{"package": n, "version": v, "why": w} for n, v, w in self.not_audited],
            "triaged": [{"id": f.ids[0], "package": f.package, **d.analysis()} for f, d in self.triaged],
            "notes": list(self.notes),
        }


def apply_triage(findings: Sequence[Finding], triage: Triage) -> tuple[list[Finding], list[tuple[Finding, Decision]]]:
    """(the findings still to act on, those a committed decision settled: not_affected, false_positive,
    resolved); a decision of exploitable or in_triage keeps its finding open (the VEX says what was decided)."""
    open_findings, settled = [], []
    for finding in findings:
        decision = triage.decision(finding.package, finding.ids)
        if decision is not None and decision.state in SETTLED:
            settled.append((finding, decision))
        else:
            open_findings.append(finding)
    return open_findings, settled


def stale_decisions(findings: Sequence[Finding], triage: Triage) -> list[str]:
    """Notes for the decisions that match no finding any more (the advisory is gone or the pin moved)."""
    return [
        f"vex-triage.yaml: {d.id} ({d.package}) matches no finding any more; remove it"
        for d in triage.decisions
        if not any(d.matches(f.package, f.ids) for f in findings)
    ]


def python_findings(audit: PythonAudit, pins: Sequence[LockedPin]) -> list[Finding]:
    where: dict[tuple[str, str], list[str]] = {}
    for pin in pins:
        where.setdefault((pin.name, pin.public), []).append(pin.lock)
    return [
        Finding(
            "pypi",
            a.name,
            a.version,
            a.ids,
            a.fix_versions,
            a.description,
            a.source,
            tuple(dict.fromkeys(where.get((a.name, a.version), []))),
        )
        for a in sorted(audit.advisories, key=lambda a: (a.name, a.version, a.ids))
    ]


def debian_findings(
    updates: Iterable[DebianUpdate], record: str, advisories: Mapping[str, tuple[str, ...]] | None = None
) -> list[Finding]:
    """The recorded packages (`record`: the record's path) that the base's `-security` suite has newer; updates
    from the suite itself or -updates are bump's, not the security lane's. `advisories`: the CVE/DSA ids each
    update fixes (from its changelog). One finding per vulnerability (CVE id), as the VEX has one statement per
    vulnerability: a decision on one of openssl's 13 CVEs settles that one, not the 12 others. Each carries the
    update's advisories (DSA/DLA) and the suite's own id (trixie-security:passwd) as aliases, so a decision on the
    DSA settles every CVE it fixes; an update whose changelog names no CVE is one finding under its other ids."""
    ids = advisories or {}
    found = []
    for update in (u for u in updates if u.security):
        named = ids.get(update.package, ())
        cves = [i for i in named if i.startswith("CVE-")]
        shared = (*(i for i in named if not i.startswith("CVE-")), f"{update.suite}:{update.package}")
        for vulnerability in [(cve, *shared) for cve in cves] or [shared]:
            found.append(
                Finding(
                    "deb",
                    update.package,
                    update.old,
                    vulnerability,
                    (update.new,),
                    f"Debian {update.suite} has {update.package} {update.new}",
                    "Debian security archive",
                    (record,),
                )
            )
    return found
