"""The audit in words: the Markdown a security pull request or issue carries, and the lines the terminal shows."""

from __future__ import annotations

from pytorch_cuda.audit.findings import AuditResult, Finding


def _line(finding: Finding) -> str:
    ids = ", ".join(finding.ids)
    fix = f"fixed in {', '.join(finding.fix_versions)}" if finding.fix_versions else "no fix published"
    return f"{finding.package} {finding.version}: {ids} ({fix}; {finding.source}) in {', '.join(finding.locks)}"


def summary_lines(result: AuditResult) -> list[str]:
    lines = [f"finding: {_line(f)}" for f in result.findings]
    lines += [f"not audited: {name} {version} ({why})" for name, version, why in result.not_audited]
    lines += [f"note: {note}" for note in result.notes]
    verdict = {0: "clean", 1: "findings", 4: "partial"}[result.exit_status]
    fixable = sum(f.action == "pull-request" for f in result.findings)
    lines.append(
        f"result: {verdict}: {len(result.findings)} finding(s) ({fixable} with a fix, "
        f"{len(result.findings) - fixable} without); {result.audited} of the distinct "
        f"pinned versions audited, {len(result.not_audited)} not; {result.debian_packages} Debian packages against "
        f"-security; {len(result.locks)} locks"
    )
    return lines


def markdown(result: AuditResult, action: str) -> str:
    """The findings of one action (pull-request or issue) as a Markdown body."""
    chosen = [f for f in result.findings if f.action == action]
    rows = [
        f"| {f.package} | {f.version} | {', '.join(f.ids)} | {', '.join(f.fix_versions) or 'none yet'} "
        f"| {', '.join(f'`{lock}`' for lock in f.locks)} | {f.description.replace('|', '/')[:200]} |"
        for f in chosen
    ]
    head = (
        "The security lane (`build.py audit`, docs/security.md) found published advisories for pinned versions."
        if chosen
        else "The security lane found nothing for this action."
    )
    table = ["| package | version | advisory | fixed in | locks | summary |", "|---|---|---|---|---|---|", *rows]
    tail = (
        "This pull request skips the release-age gate (`policy: min_release_age`): a fix is not held back."
        if action == "pull-request"
        else "No fixed version is published yet; this issue stays open until one is, or the pin is dropped."
    )
    return "\n".join([head, "", *table, "", tail, ""])


def lane_outputs(result: AuditResult) -> dict[str, str]:
    """The security workflow's step outputs: PyPI findings a pull request fixes, Debian findings (bump.yml
    rebuilds the base), and findings without a fix (an issue each), as counts."""
    return {
        "fixable": str(sum(f.action == "pull-request" and f.ecosystem == "pypi" for f in result.findings)),
        "debian": str(sum(f.ecosystem == "deb" for f in result.findings)),
        "unfixable": str(sum(f.action == "issue" for f in result.findings)),
    }


def lane_summary(result: AuditResult) -> str:
    """The security job's summary: the pull request's findings, then the issue's."""
    return "### build.py audit\n" + markdown(result, "pull-request") + markdown(result, "issue")
