"""The Markdown of `build.py report --diff`: a pull request body (or $GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda.precision_report.diff import Diff, MetricRow
from pytorch_cuda.precision_report.markdown import _table  # the report's own Markdown table
from pytorch_cuda_contract.results_file import ConformanceResults

MARK = {"regression": "**regression**", "improved": "improved"}
RUN_LABELS = ("file", "started", "GPU", "torch", "cuDNN", "NCCL", "image", "tests")


def value_text(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    shown = f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return f"{shown} {unit}".strip()


def run_facts(results: ConformanceResults) -> list[str]:
    def version(name: str) -> str:
        """What the run measured (its environment), else what its image's manifest pins."""
        pins = results.manifest.get("pins")
        pinned = pins.get(name) if isinstance(pins, dict) else None
        return str(results.environment.get(name) or pinned or "-")

    totals = ", ".join(f"{n} {k}" for k, n in results.totals.items() if k != "total" and n)
    gpus = ", ".join(sorted({gpu.name for gpu in results.gpus})) or "no GPU"
    return [
        Path(results.source).name,  # the file's name: never a path of the machine that ran the diff
        results.started_at or "-",
        gpus,
        version("torch"),
        version("cudnn"),
        version("nccl"),
        results.image.digest or results.image.revision or "-",
        totals or "-",
    ]


def metric_cells(row: MetricRow) -> list[str]:
    change = "-" if row.change is None else f"{row.change:+.1%}"
    return [
        row.name,
        value_text(row.old, row.unit),
        value_text(row.new, row.unit),
        change,
        f"±{row.noise:.0%}",
        MARK.get(row.status, row.status),
    ]


def not_like_for_like(diff: Diff) -> list[str]:
    """The loud block: how the two runs differ, so that their numbers are not the image's doing alone."""
    if not diff.mismatches:
        return []
    lines = ["> [!CAUTION]", "> **Not like for like.** These runs differ in more than the candidate's pins:"]
    lines += [f"> - {line}" for line in diff.mismatches]
    lines += ["> A move below may come from that difference, not from the candidate.", ""]
    return lines


def render_diff_markdown(diff: Diff, html_url: str | None = None) -> str:
    old, new = run_facts(diff.old), run_facts(diff.new)
    lines = ["# Precision diff: old -> new", "", *not_like_for_like(diff)]
    if html_url:
        lines += [f"[The diff as an HTML page]({html_url})", ""]
    lines += _table(["", "old", "new"], [(label, a, b) for label, a, b in zip(RUN_LABELS, old, new, strict=True)])
    count = diff.regressions
    lines += [f"**{count} regression(s) beyond noise.**" if count else "No regression beyond noise.", ""]
    for section in dict.fromkeys(row.section for row in diff.metrics):
        lines += [f"## {section}", ""]
        rows = [metric_cells(row) for row in diff.metrics if row.section == section]
        lines += _table(["metric", "old", "new", "change", "noise", ""], rows)
    lines += ["## Verdicts", ""]
    verdicts = [(r.what, r.old, r.new, MARK.get(r.status, r.status)) for r in diff.verdicts]
    lines += _table(["dtype", "old", "new", ""], verdicts)
    lines += ["## Tests that changed", ""]
    if diff.tests:
        changed = [(f"`{r.what}`", r.old, r.new, MARK.get(r.status, r.status), r.note) for r in diff.tests]
        lines += _table(["test", "old", "new", "", "message"], changed)
    else:
        lines += ["None: every test has the same outcome in both runs.", ""]
    return "\n".join(lines)
