"""The report's charts, drawn with matplotlib into inline SVG (text stays text; no date, fixed ids)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any, Final

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from pytorch_cuda_contract.advice import DTYPES

AMP_DTYPES: Final = ("fp32", "fp16", "bf16")
COLOURS: Final = ("#2563eb", "#ea580c", "#16a34a", "#9333ea", "#dc2626", "#0891b2")


def svg_text(figure: Figure) -> str:
    """The figure as inline SVG: text stays text, no date, fixed ids (the same input gives the same bytes)."""
    buffer = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "pytorch-cuda-report"}):
        figure.savefig(
            buffer,
            format="svg",
            bbox_inches="tight",
            metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
        )
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _label(entry: dict[str, Any]) -> str:
    return f"{entry['gpu'] or 'no GPU'} / {entry['image']['label']}"


def _grouped(
    ax: Axes, entries: Sequence[dict[str, Any]], keys: Sequence[str], values: list[list[float | None]]
) -> None:
    width = 0.8 / max(len(entries), 1)
    for i, (entry, row) in enumerate(zip(entries, values, strict=True)):
        xs = [k + i * width - 0.4 + width / 2 for k in range(len(keys))]
        heights = [v if v is not None else 0.0 for v in row]
        bars = ax.bar(xs, heights, width * 0.9, label=_label(entry), color=COLOURS[i % len(COLOURS)])
        ax.bar_label(bars, labels=[f"{v:.4g}" if v is not None else "n/m" for v in row], fontsize=7, padding=2)
    ax.set_xticks(range(len(keys)), list(keys))
    ax.spines[["top", "right"]].set_visible(False)


def _legend(figure: Figure, ax: Axes) -> None:
    handles, labels = ax.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=8, frameon=False)


def gemm_chart(entries: Sequence[dict[str, Any]]) -> str | None:
    """GEMM TFLOP/s per dtype; the datasheet peak as an outline behind each bar."""
    rows = [{d["dtype"]: d for d in e["dtypes"]} for e in entries]
    if not any(r.get(d, {}).get("gemm_tflops") is not None for r in rows for d in DTYPES):
        return None
    figure = Figure(figsize=(8, 4.2), layout="constrained")
    ax = figure.add_subplot()
    width = 0.8 / max(len(entries), 1)
    for i, row in enumerate(rows):
        xs = [k + i * width - 0.4 + width / 2 for k in range(len(DTYPES))]
        peaks = [row.get(d, {}).get("peak_tflops") or 0.0 for d in DTYPES]
        ax.bar(xs, peaks, width * 0.9, fill=False, edgecolor="#9ca3af", linestyle="--", linewidth=0.8)
    values = [[r.get(d, {}).get("gemm_tflops") for d in DTYPES] for r in rows]
    _grouped(ax, entries, DTYPES, values)
    ax.set_ylabel("TFLOP/s (dashed: datasheet peak)")
    ax.set_title("GEMM throughput per dtype (n/m: not measured)")
    _legend(figure, ax)
    return svg_text(figure)


def amp_chart(entries: Sequence[dict[str, Any]]) -> str | None:
    """AMP training step time and peak memory per dtype."""
    rows = [{r["dtype"]: r for r in e["amp"]} for e in entries]
    if not any(r.get(d, {}).get("step_ms") is not None for r in rows for d in AMP_DTYPES):
        return None
    figure = Figure(figsize=(9, 4.0), layout="constrained")
    left, right = figure.subplots(1, 2)
    _grouped(left, entries, AMP_DTYPES, [[r.get(d, {}).get("step_ms") for d in AMP_DTYPES] for r in rows])
    left.set_title("AMP training step (ms, lower is better)")
    _grouped(right, entries, AMP_DTYPES, [[r.get(d, {}).get("peak_mem_mib") for d in AMP_DTYPES] for r in rows])
    right.set_title("peak memory (MiB)")
    _legend(figure, left)
    return svg_text(figure)


def compile_chart(entries: Sequence[dict[str, Any]]) -> str | None:
    """torch.compile speedup over eager, with the article's +10-20% band."""
    keys = ("inference", "training")
    values = [[e["compile"].get(k) for k in keys] for e in entries]
    if not any(v is not None for row in values for v in row):
        return None
    figure = Figure(figsize=(7, 4.0), layout="constrained")
    ax = figure.add_subplot()
    ax.axhspan(1.1, 1.2, color="#fde68a", alpha=0.6, label="article: +10-20%")
    ax.axhline(1.0, color="#6b7280", linewidth=0.8)
    _grouped(ax, entries, keys, values)
    ax.set_ylabel("x eager")
    ax.set_title("torch.compile speedup")
    _legend(figure, ax)
    return svg_text(figure)


def all_charts(entries: Sequence[dict[str, Any]]) -> dict[str, str | None]:
    return {"gemm": gemm_chart(entries), "amp": amp_chart(entries), "compile": compile_chart(entries)}
