"""Shape report.json's entries for people: lookups, status lines, the image × GPU pivot; render the HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import jinja2

from pytorch_cuda.precision_report.charts import all_charts
from pytorch_cuda_contract.advice import DTYPES, fmt

CHART_CAPTIONS: Final = (
    ("gemm", "GEMM TFLOP/s per dtype against the datasheet peak"),
    ("amp", "AMP training step time and peak memory"),
    ("compile", "torch.compile speedup for inference and training"),
)
PIN_KEYS: Final = ("python", "torch", "cuda", "cudnn", "nccl", "triton")


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def times(value: float | None) -> str:
    return "-" if value is None else f"{fmt(value)}x"


def frac(value: float | None) -> str:
    return "not measured" if value is None else f"{100 * value:.0f}%"


def flag(value: float | None) -> str:
    return "not measured" if value is None else "yes" if value else "no"


def vclass(verdict: str) -> str:
    return {"confirmed": "v-confirmed", "refuted": "v-refuted"}.get(verdict, "v-not")


def status_text(entry: dict[str, Any]) -> str:
    counts = entry["status"]["counts"]
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no tests"


def _software_rows(entry: dict[str, Any]) -> list[tuple[str, tuple[str, str]]]:
    reported = entry["software"]["torch_reports"]
    pins = entry["software"]["manifest_pins"] or {}
    keys = [k for k in PIN_KEYS if k in reported or k in pins] + [k for k in reported if k not in PIN_KEYS]
    return [(k, (str(reported.get(k, "-")), str(pins.get(k, "-")))) for k in keys]


def decorate(entry: dict[str, Any]) -> dict[str, Any]:
    """Add the lookups the templates use; report.json keeps only the plain document."""
    rows = {d["dtype"]: d for d in entry["dtypes"]}
    empty = dict.fromkeys(("gemm_tflops", "pct_peak", "speedup"))
    gpus = entry["hardware"]["gpus"]
    return {
        **entry,
        "rows": {d: rows.get(d, empty) for d in DTYPES},
        "amp_by": {a["dtype"]: a for a in entry["amp"]} or {"bf16": empty, "fp16": empty},
        "cc": gpus[0]["compute_capability"] if gpus else None,
        "choice": next((r["choice"] for r in entry["recommendation"] if r["topic"] == "precision"), None),
        "status_text": status_text(entry),
        "software_rows": _software_rows(entry),
    }


def pivot(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """image rows × GPU columns, the recommended precision in each cell (only when there is more than one entry)."""
    if len(entries) < 2:
        return None
    gpus = list(dict.fromkeys(e["gpu"] or "no GPU" for e in entries))
    images = list(dict.fromkeys(e["image"]["label"] for e in entries))
    cell = {(e["image"]["label"], e["gpu"] or "no GPU"): e["choice"] for e in entries}
    return {"gpus": gpus, "rows": [(i, [cell.get((i, g)) for g in gpus]) for i in images]}


def render_html(document: dict[str, Any]) -> str:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(fmt=fmt, times=times, pct=pct, frac=frac, flag=flag, vclass=vclass)
    entries = [decorate(e) for e in document["entries"]]
    gpus = sorted({e["gpu"] or "no GPU" for e in entries})
    return environment.get_template("report.html.j2").render(
        title=", ".join(gpus),
        schema=document["schema"],
        sources=document["sources"],
        entries=entries,
        dtypes=DTYPES,
        pivot=pivot(entries),
        charts=all_charts(document["entries"]),
        chart_captions=CHART_CAPTIONS,
    )
