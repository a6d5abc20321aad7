"""Fail when a workflow that a pull request triggers can reach a self-hosted runner (scripts/lint-ci.sh runs it).

A fork's pull request runs the workflow files of its own branch, so any job such a workflow runs, directly or
through a local reusable workflow (`uses: ./.github/workflows/X.yml`), must run on a GitHub-hosted image named
literally. A job fails the check when its `runs-on` names `self-hosted`, a custom label of
.github/actionlint.yaml (fleet.yaml's), a runner `group`, or an expression (which could resolve to any of them).
The organisation's runner-group allow-list is the other half (docs/release.md, "Runner hardening").
Usage: pr_runner_reach.py [ROOT]; exit 1 with one line per reachable job, 0 when none.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

PR_TRIGGERS = {"pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment"}


def triggers(workflow: dict[Any, Any]) -> set[str]:
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on:` as True
    if isinstance(on, str):
        return {on}
    if isinstance(on, list):
        return {str(item) for item in on}
    return {str(key) for key in on or {}}


def reaches(runs_on: Any, custom: set[str]) -> str | None:
    """Why this `runs-on` could be a self-hosted runner, or None for a literal GitHub-hosted image."""
    if isinstance(runs_on, dict):
        if "group" in runs_on:
            return f"runner group {runs_on['group']!r}"
        return reaches(runs_on.get("labels"), custom)
    labels = [runs_on] if isinstance(runs_on, str) else list(runs_on or [])
    for label in labels:
        text = str(label)
        if "${{" in text:
            return f"the expression {text!r} (it could name a self-hosted label)"
        if text == "self-hosted" or text in custom:
            return f"the self-hosted label {text!r}"
    return None


def findings(root: Path) -> list[str]:
    config = yaml.safe_load((root / ".github" / "actionlint.yaml").read_text()) or {}
    custom = set((config.get("self-hosted-runner") or {}).get("labels") or [])
    folder = root / ".github" / "workflows"
    files = {path.name: yaml.safe_load(path.read_text()) or {} for path in sorted(folder.glob("*.y*ml"))}
    found: list[str] = []

    def walk(name: str, via: str, seen: frozenset[str]) -> None:
        for job_id, job in (files.get(name, {}).get("jobs") or {}).items():
            called = str(job.get("uses", ""))
            if called.startswith("./.github/workflows/"):
                target = called.rsplit("/", 1)[-1]
                if target not in seen:
                    walk(target, f"{via} calls {target} (job {job_id!r})", seen | {target})
                continue
            why = reaches(job.get("runs-on"), custom)
            if why is not None:
                found.append(f"{via}: job {job_id!r} of {name} can run on {why}")

    for name, workflow in files.items():
        pr = sorted(triggers(workflow) & PR_TRIGGERS)
        if pr:
            walk(name, f"{name} (on {', '.join(pr)})", frozenset({name}))
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path.cwd()
    problems = findings(root)
    for problem in problems:
        print(f"pr-runner-reach: {problem}")
    if problems:
        print(
            "pr-runner-reach: a pull request (a fork's too) runs its own copy of these workflows: keep every job they "
            "reach on a GitHub-hosted image named literally (runs-on: ubuntu-24.04), and GPU jobs in workflows "
            "that pull requests do not trigger"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
