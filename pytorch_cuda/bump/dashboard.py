"""The dependency dashboard: one issue, kept up to date by bump.yml from `build.py bump --dry-run --json`, that
is the single place a maintainer looks, as Renovate's Dependency Dashboard is: what is pending (the policy allows
it; its group's pull request carries it), each group's pull request (its branch, and whether this run made it
again, closed it as overtaken or kept it), held back (with the rule that holds each), waiting for its release age,
unreachable (targets whose index did not answer) and failed (what the workflow reports). Its checkboxes ask the
bot for something: a rebase (the pull request made again from the default branch), the waiting releases now, or
a held-back pin past its rule. `requests` reads the ticked boxes back from the issue's body."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DASHBOARD_MARKER = "<!-- pytorch-cuda dependency dashboard -->"
LABEL = "dependency-dashboard"
_BOX = re.compile(r"^\s*[-*] \[[xX]\] .*<!-- bump-dashboard: (?P<ask>[a-z-]+)(?: (?P<pin>[\w.-]+))? -->\s*$")


@dataclass(frozen=True)
class Requests:
    """What the ticked boxes ask of the next bump."""

    rebase: bool = False  # make the pull request again from the default branch
    skip_age: bool = False  # --ignore-release-age: the waiting releases now
    approve: tuple[str, ...] = ()  # --approve PIN: move these held-back pins past their rule

    def bump_flags(self) -> list[str]:
        flags = ["--ignore-release-age"] if self.skip_age else []
        return flags + [f"--approve={pin}" for pin in self.approve]

    def as_dict(self) -> dict[str, Any]:
        return {
            "rebase": self.rebase,
            "skip_age": self.skip_age,
            "approve": list(self.approve),
            "flags": self.bump_flags(),
        }


def requests(body: str) -> Requests:
    """The requests of a dashboard's body: its ticked boxes (an unticked box, or text outside one, asks nothing)."""
    asked = [match for line in body.splitlines() if (match := _BOX.match(line))]
    return Requests(
        rebase=any(m["ask"] == "rebase" for m in asked),
        skip_age=any(m["ask"] == "skip-age" for m in asked),
        approve=tuple(dict.fromkeys(m["pin"] for m in asked if m["ask"] == "approve" and m["pin"])),
    )


def _box(text: str, ask: str, pin: str = "") -> str:
    return f"- [ ] {text} <!-- bump-dashboard: {ask}{' ' + pin if pin else ''} -->"


def _section(title: str, count: int, rows: list[str], empty: str) -> list[str]:
    return ["", f"## {title} ({count})", "", *(rows or [empty])]


def _pending(plan: Mapping[str, Any]) -> list[str]:
    moved = plan.get("moved", [])
    if not moved:
        return []
    rows = ["| pin | current | new | group | allowed by |", "|---|---|---|---|---|"]
    rows += [f"| `{m['pin']}` | {m['old']} | **{m['new']}** | {m.get('group', '')} | {m['why']} |" for m in moved]
    return [*rows, "", _box("rebase: make every group's pull request again from the default branch", "rebase")]


_DOES = {"update": "opened or updated", "close": "closed if open", "keep": "left as it is"}


def _groups(plan: Mapping[str, Any]) -> list[str]:
    groups = plan.get("groups", [])
    if not groups:
        return []
    rows = ["| group | branch | carries | this run |", "|---|---|---|---|"]
    for g in groups:
        carries = [f"`{pin}`" for pin in g["pins"]] + ([f"{len(g['debian'])} Debian package(s)"] if g["debian"] else [])
        fixes = f" (fixes {', '.join(g['advisories'])})" if g.get("advisories") else ""
        does = f"{_DOES.get(g['action'], g['action'])}: {g['why']}"
        rows.append(f"| {g['group']} | `{g['branch']}` | {', '.join(carries) or 'nothing'}{fixes} | {does} |")
    return rows


def _held_back(plan: Mapping[str, Any]) -> list[str]:
    rows = []
    for held in plan.get("held_back", []):
        line = f"`{held['pin']}` {held['current']} -> {held['newest']}: held back by `{held.get('rule') or 'policy'}`"
        if held["pin"].startswith("targets."):
            rows.append(f"- {line} (a new torch series is a new release line of this project, not a bump)")
        else:
            rows.append(_box(f"{line}; tick to move it past its rule", "approve", held["pin"]))
    return rows


def _waiting(plan: Mapping[str, Any]) -> list[str]:
    rows = [f"- `{w['pin']}`: {', '.join(w['versions'])}" for w in plan.get("too_new", [])]
    if rows:
        rows += ["", _box("bump these now, without waiting (as the security lane does)", "skip-age")]
    return rows


def render(plan: Mapping[str, Any], *, failed: Sequence[str] = (), run: str = "") -> str:
    """The issue's Markdown body, from a bump's JSON (`build.py bump --dry-run --json`)."""
    unreachable = [
        f"- `{t['target']}` ({t['index']}): {t['unreachable']}" for t in plan.get("targets", []) if t.get("unreachable")
    ]
    checked = [t["target"] for t in plan.get("targets", []) if t.get("checked")]
    lines = [
        DASHBOARD_MARKER,
        "This issue is the dependency dashboard: bump.yml rewrites it after every run of `build.py bump` "
        "(docs/bump.md). Tick a box to ask the next run for it.",
        "",
        f"Last run: {run or 'build.py bump --dry-run'}; result **{plan.get('result', 'unknown')}**; "
        f"targets checked: {', '.join(f'`{t}`' for t in checked) or 'none'}.",
    ]
    count = {key: len(plan.get(key, [])) for key in ("moved", "held_back", "too_new")}
    lines += _section("Pending", count["moved"], _pending(plan), "Every pin is the newest its policy allows.")
    opened = sum(g["action"] == "update" for g in plan.get("groups", []))
    lines += _section("Pull requests by group", opened, _groups(plan), "This run planned no group (a --group run).")
    lines += _section("Held back by the policy", count["held_back"], _held_back(plan), "Nothing is held back.")
    lines += _section(
        "Waiting for the release age (`policy: min_release_age`)", count["too_new"], _waiting(plan),
        "No release is waiting.",
    )  # fmt: skip
    lines += _section("Unreachable (not checked this run)", len(unreachable), unreachable, "Every index answered.")
    lines += _section("Failed", len(failed), [f"- {f}" for f in failed], "Nothing failed.")
    debian = [
        f"- {d['package']} {d['old']} -> {d['new']} ({d['suite']}{', security' if d['security'] else ''})"
        for d in plan.get("debian_updates", [])
    ]
    if debian:
        lines += _section("Debian packages newer than the images'", len(debian), debian, "")
    return "\n".join(lines) + "\n"
