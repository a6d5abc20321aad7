"""The bump pull request's body, from `build.py bump --json`: each moved (or held back, or waiting) package with
its release notes (the project's own link in PyPI's project_urls: a changelog or release notes; else its GitHub
releases page; else its PyPI page), the targets left out, Debian's updates and the notes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytorch_cuda.errors import UserError
from pytorch_cuda.package_index.simple_index import fetch_bytes

ProjectUrls = Callable[[str], Mapping[str, str]]  # package -> PyPI's info.project_urls ({} when unknown)
_NOTES = re.compile(r"change ?log|changes|release ?notes|releases|history|what'?s ?new|news", re.IGNORECASE)
_GITHUB = re.compile(r"^https://github\.com/[^/\s]+/[^/\s#?]+")
_PINS_OF_TORCH = {"triton": "triton", "cudnn": "nvidia-cudnn-cu12", "nccl": "nvidia-nccl-cu12"}


def package_of(pin: str) -> str:
    """The PyPI project of a matrix.yaml pin (targets.cu128.cudnn -> nvidia-cudnn-cu12)."""
    leaf = pin.rsplit(".", 1)[-1]
    return _PINS_OF_TORCH.get(leaf, leaf) if pin.startswith("targets.") else leaf


def pypi_project_urls(ca: Path | None) -> ProjectUrls:
    """A package's project_urls from PyPI's JSON API; {} where PyPI does not answer (the body links PyPI)."""

    def urls(name: str) -> dict[str, str]:
        try:
            info = json.loads(fetch_bytes(f"https://pypi.org/pypi/{name}/json", ca, "application/json")[1])["info"]
        except (UserError, ValueError, KeyError):
            return {}
        return {str(k): str(v) for k, v in (info.get("project_urls") or {}).items()}

    return urls


def release_notes(package: str, version: str, urls: ProjectUrls) -> str:
    """A Markdown link to what changed in `version` of `package`."""
    found = dict(urls(package))
    notes = next((url for key, url in found.items() if _NOTES.search(key)), None)
    if notes:
        return f"[release notes]({notes})"
    repository = next((m[0] for url in found.values() if (m := _GITHUB.match(url))), None)
    if repository:
        return f"[GitHub releases]({repository.removesuffix('.git')}/releases)"
    return f"[PyPI](https://pypi.org/project/{package}/{version}/)"


def _rows(plan: Mapping[str, Any], urls: ProjectUrls) -> list[str]:
    rows = [
        f"| `{m['pin']}` | {m['old']} | **{m['new']}** | {m['why']} "
        f"| {release_notes(package_of(m['pin']), m['new'], urls)} |"
        for m in plan.get("moved", [])
    ]
    rows += [
        f"| `{h['pin']}` | {h['current']} | {h['current']} (held back: {h['newest']}) | not admitted by the policy "
        f"| {release_notes(package_of(h['pin']), h['newest'], urls)} |"
        for h in plan.get("held_back", [])
    ]
    rows += [
        f"| `{w['pin']}` | | (waiting: {', '.join(w['versions'])}) | younger than `policy: min_release_age` "
        f"| {release_notes(package_of(w['pin']), w['versions'][-1], urls)} |"
        for w in plan.get("too_new", [])
    ]
    return rows


def pr_body(plan: Mapping[str, Any], urls: ProjectUrls, *, command: str = "build.py bump") -> str:
    lines = [f"Moved by `{command}` within matrix.yaml's `policy:` (docs/bump.md). Result: **{plan['result']}**."]
    groups = plan.get("groups", [])
    if len(groups) == 1:  # a group run (`bump --group G`): the other groups have their own pull requests
        fixed = f"; it fixes {', '.join(groups[0]['advisories'])}" if groups[0]["advisories"] else ""
        lines[0] += f" The **{groups[0]['group']}** group (branch `{groups[0]['branch']}`){fixed}."
    left_out = [t for t in plan.get("targets", []) if t.get("unreachable")]
    if left_out:
        lines += ["", "> [!WARNING]", "> **Partial** (exit 4): these targets were not checked, their pins not moved:"]
        lines += [f"> - `{t['target']}` ({t['index']}): {t['unreachable']}" for t in left_out]
    rows = _rows(plan, urls)
    if rows:
        lines += ["", "| pin | old | new | why | what changed |", "|---|---|---|---|---|", *rows]
    else:
        lines += ["", "No pin moved, and none is held back or waiting."]
    debian = plan.get("debian_updates", [])
    if debian:
        lines += ["", "Debian packages newer than the images' (a rebuild takes them):", ""]
        lines += [
            f"- {d['package']} {d['old']} -> {d['new']} ({d['suite']}{', security' if d['security'] else ''})"
            for d in debian
        ]
    if plan.get("notes"):
        lines += ["", "<details><summary>Notes</summary>", "", *[f"- {n}" for n in plan["notes"]], "", "</details>"]
    return "\n".join(lines) + "\n"
