"""What security.yml's issue job does, in Python: one issue labelled `security` per advisory that `build.py audit`
found without a fixed release (its `action: issue` findings), unless an open one already names the advisory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pytorch_cuda.bot.github_rest import GitHub

SECURITY_LABEL: Final = "security"


def advisory_issue(finding: Mapping[str, Any]) -> tuple[str, str]:
    """The issue's title and body for one finding of `build.py audit --json`."""
    title = f"security: {finding['id']} in {finding['package']} {finding['version']} (no fixed release)"
    body = (
        f"{finding.get('description', '')}\n\nAliases: {', '.join(finding.get('aliases', []))}\n"
        f"Pinned in: {', '.join(finding.get('locks', []))}\nSource: {finding.get('source', '')}\n\n"
        "Found by the security lane (build.py audit, docs/security.md).\n"
    )
    return title, body


def open_advisory_issues(github: GitHub, audit: Mapping[str, Any]) -> list[str]:
    """Open the missing issues; one line per advisory without a fix: opened, or that one is open."""
    github.ensure_label(SECURITY_LABEL, "B60205", "the security lane")
    titles = [str(issue.get("title", "")) for issue in github.open_issues(SECURITY_LABEL)]
    done = []
    for finding in (f for f in audit.get("findings", []) if f.get("action") == "issue"):
        if any(str(finding["id"]) in title for title in titles):
            done.append(f"{finding['id']}: an issue is open")
            continue
        title, body = advisory_issue(finding)
        titles.append(title)
        done.append(f"{finding['id']}: opened #{github.create_issue(title, body, (SECURITY_LABEL,))}")
    return done
