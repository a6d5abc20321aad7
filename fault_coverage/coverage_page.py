"""The Markdown page of one card's fault x check matrix (the JSON is the matrix itself)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytorch_cuda_contract.gpu_models import find_model

# not_judged: a check of the image's own files on the shipped stack carried to a bare host (never gated there)
CODES: Final = {"failed": "F", "passed": ".", "skipped": "s", "not_judged": "n", "not_run": "-", "absent": "-"}


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(str(cell).replace("|", "\\|").replace("\n", " ") for cell in row) + " |" for row in rows
    ]
    return [*lines, ""]


def _names(items: Sequence[str]) -> str:
    return ", ".join(f"`{item}`" for item in items) or "none"


def _patched_only(coverage: Mapping[str, Any]) -> list[str]:
    untripped = set(coverage["untripped"])
    return [c for c in coverage["real_untripped"] if c not in untripped]


def card_facts(host: Mapping[str, Any]) -> str:
    """``cc 9.0``, with the model, its architecture and interconnect when the contract's GPU table knows the card."""
    model = find_model(str(host.get("gpu") or ""))
    cc = f"cc {host['compute_capability']}"
    return cc if model is None else f"{model.name}, {model.architecture}, {cc}, {model.interconnect}"


def render(matrix: Mapping[str, Any]) -> str:
    host, coverage = matrix["host"], matrix["coverage"]
    cases: list[Mapping[str, Any]] = matrix["cases"]
    faults = [c for c in cases if c["kind"] == "fault"]
    controls = [c for c in cases if c["kind"] == "control"]
    lines = [
        f"# Fault coverage on the {matrix['card']}: {host['gpu']} ({card_facts(host)}), "
        f"torch {host['torch']}, CUDA {host['cuda']}",
        "",
        "Written by `python3 -m fault_coverage` from the results files of one run per case "
        f"(untouched run started {host['started_at']}, the whole suite in {host['suite_wall_s']} s).",
        "",
        f"**Fault coverage: {coverage['tripped']} of {coverage['gated']} gated checks tripped by a fault "
        f"({coverage['percent']}%); by a real fault (the environment or a setting, as a host can have it): "
        f"{coverage['real_tripped']} of {coverage['gated']} ({coverage['real_percent']}%).** "
        f"Untripped: {_names(coverage['untripped'])}.",
        "",
        "Gated checks each kind of fault trips: "
        + ", ".join(f"{kind} {count}" for kind, count in coverage["by_kind"].items())
        + f". Tripped only by a library patch or a replaced value: {_names(_patched_only(coverage))}.",
        "",
        "**Findings:** "
        + (
            "none: every fault tripped what it targets or is a gap named below, and every control tripped nothing."
            if not matrix["findings"]
            else f"{len(matrix['findings'])}."
        ),
        "",
    ]
    lines += [f"- {finding}" for finding in matrix["findings"]]
    if matrix["findings"]:
        lines.append("")
    if matrix.get("not_run"):
        lines += [f"**Partial: {len(matrix['not_run'])} cases of the catalogue have no run on this card**, so the "
                  f"coverage above counts the others only: {_names(matrix['not_run'])}.", ""]  # fmt: skip
    lines += _suite_lines(matrix.get("suites"))
    if matrix["gaps"]:
        lines += ["**Gaps: faults that trip nothing here, and why** (not findings: the catalogue names the reason; "
                  "the regressions history or a two-GPU host must catch them):", ""]  # fmt: skip
        lines += [f"- `{gap['fault']}`: {gap['reason']}" for gap in matrix["gaps"]]
        lines.append("")
    lines += ["## Faults", ""]
    lines += _table(
        ["#", "fault", "kind", "the real failure it models", "injected by", "tripped", "collateral", "missed", "s"],
        [[i, f"`{f['name']}`", f["fault_kind"], f["models"], f["injection"],
          _names(f["tripped"]) if f["tripped"] or not f["gap"] else f"none (gap: {f['gap']})",
          _names(f["collateral"]), _names(f["missed"]), f["wall_s"]] for i, f in enumerate(faults, 1)],
    )  # fmt: skip
    lines += ["## Controls (legitimate setups: they must trip nothing)", ""]
    lines += _table(
        ["control", "setup", "injected by", "failed", "missing named skips", "s"],
        [[f"`{c['name']}`", c["models"], c["injection"], _names(c["failed"]), _names(c["missing_skips"]),
          c["wall_s"]] for c in controls],
    )  # fmt: skip
    lines += _check_table(matrix, faults, controls)
    return "\n".join(lines).rstrip() + "\n"


def _short(digest: str | None) -> str:
    return f"`{digest.removeprefix('sha256:')[:12]}`" if digest else "unknown"


def _suite_lines(suites: Mapping[str, Any] | None) -> list[str]:
    """Which suite version judged which case: one line when every run had the latest run's suite."""
    if not suites or not suites["by_digest"]:
        return ["**Suite versions:** no run recorded its suite digest.", ""]
    versions = len(suites["by_digest"])
    if not suites["older"]:
        return [f"**Suite versions:** every run had one suite, {_short(suites['latest'])}.", ""]
    lines = [
        f"**Suite versions: the runs span {versions} suites**; the checks of "
        f"{len(suites['older'])} cases were judged by a suite other than the latest run's "
        f"({_short(suites['latest'])}): {_names(suites['older'])}.",
        "",
    ]
    lines += [f"- {_short(digest)}: {_names(cases)}" for digest, cases in suites["by_digest"].items()]
    return [*lines, ""]


def _check_table(
    matrix: Mapping[str, Any], faults: Sequence[Mapping[str, Any]], controls: Sequence[Mapping[str, Any]]
) -> list[str]:
    checks: Mapping[str, Mapping[str, Any]] = matrix["checks"]
    grid: Mapping[str, Mapping[str, str]] = matrix["grid"]
    columns = [c["name"] for c in controls] + [f["name"] for f in faults]
    legend = ", ".join(f"{code} {name}" for name, code in CODES.items() if name != "absent")
    lines = [
        "## Checks",
        "",
        f"One column a case: the controls by name, then the faults by their number above ({legend}). A control "
        "other than the untouched one runs its timed checks alone and the rest beside the faults: both read as one.",
        "",
    ]
    header = [
        "check",
        "gated",
        "tripped by",
        "by a real fault",
        *[f"`{c['name']}`" for c in controls],
        *map(str, range(1, len(faults) + 1)),
    ]
    rows = []
    for name, check in checks.items():
        status = "yes" if check["gated"] else ("informational" if check["informational"] else check["untouched"])
        cells = [CODES.get(grid[name].get(column, "absent"), "?") for column in columns]
        real = _names(check["tripped_by_real"]) if check["gated"] else ""
        rows.append([f"`{name}`", status, _names(check["tripped_by"]) if check["gated"] else "", real, *cells])
    lines += _table(header, rows)
    skipped = [(n, c["reason"]) for n, c in checks.items() if c["untouched"] != "passed"]
    if skipped:
        lines += ["## Not applicable on this host (skipped in the untouched run)", ""]
        lines += _table(["check", "why"], [[f"`{n}`", reason] for n, reason in skipped])
    informational = [(n, c["informational"]) for n, c in checks.items() if c["informational"]]
    if informational:
        lines += ["## Informational checks (they document a fact and gate nothing)", ""]
        lines += _table(["check", "why no fault can trip it"], [[f"`{n}`", why] for n, why in informational])
    return lines
