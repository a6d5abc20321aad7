"""report.md: the same content as the HTML, for a PR comment or $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytorch_cuda.precision_report.view import decorate, flag, frac, pct, pivot, times
from pytorch_cuda_contract.advice import DTYPES, fmt


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return [*lines, *("| " + " | ".join(cell(c) for c in row) + " |" for row in rows), ""]


def _comparison(entries: list[dict[str, Any]]) -> list[str]:
    header = ["GPU", "cc", "image", "recommendation", *(f"{d} TFLOP/s" for d in DTYPES), "AMP bf16", "compile", "tests"]
    rows = []
    for e in entries:
        tflops = [
            fmt(e["rows"][d]["gemm_tflops"])
            + (f" ({pct(e['rows'][d]['pct_peak'])})" if e["rows"][d]["pct_peak"] is not None else "")
            for d in DTYPES
        ]
        bf16 = e["amp_by"].get("bf16", {}).get("speedup")
        row = [e["gpu"] or "no GPU", e["cc"] or "-", e["image"]["label"], f"**{e['choice'] or '-'}**", *tflops]
        rows.append([*row, times(bf16), times(e["compile"]["training"]), e["status_text"]])
    return _table(header, rows)


def _dtype_row(d: dict[str, Any]) -> list[str]:
    verdict = f"{d['verdict']} ({d['verdict_source']})"
    numbers = [fmt(d[k]) for k in ("gemm_tflops", "peak_tflops")]
    rest = [fmt(d[k]) for k in ("x_fp32", "error", "conv_tflops", "sdpa_tflops")]
    return [d["dtype"], verdict, *numbers, pct(d["pct_peak"]), fmt(d["mamf_tflops"]), pct(d["pct_mamf"]), *rest]


def _entry(e: dict[str, Any]) -> list[str]:
    lines = [f"### {e['gpu'] or 'no GPU'} · {e['image']['label']}", "", f"`{e['source']}`", ""]
    if not e["status"]["complete"]:
        lines += [f"> **Incomplete run** ({e['status_text']}): numbers not measured show as `-`."]
        lines += [f"> failed: {f}" for f in e["status"]["failures"]] + [
            f"> missing: {m}" for m in e["status"]["missing"]
        ]
        lines += [""]
    lines += [f"**Recommendation: {e['choice'] or 'none'}**", ""]
    lines += [f"- {r['text']}" + (f" ({r['numbers']})" if r["numbers"] else "") for r in e["recommendation"]] + [""]
    dtype_rows = [_dtype_row(d) for d in e["dtypes"]]
    header = ["dtype", "verdict", "GEMM TFLOP/s", "peak", "% peak", "MAMF", "% MAMF", "x fp32", "error", "conv", "SDPA"]
    lines += _table(header, dtype_rows)
    amp_rows = [
        [a["dtype"], fmt(a["step_ms"]), fmt(a["speedup"]), fmt(a["peak_mem_mib"]), pct(a["mem_saving_pct"])]
        for a in e["amp"]
    ]
    lines += _table(["AMP", "step ms", "x fp32", "peak MiB", "memory saved"], amp_rows)
    g, c, busbw = e["grad_scaler"], e["compile"], e["nccl"]["busbw_gbps"]
    compiled = (
        f"inference {times(c['inference'])}, training {times(c['training'])}"
        if c["inference"] is not None or c["training"] is not None
        else "not measured"
    )
    lines += [
        f"fp16 gradients lost to underflow: {frac(g['fp16_zero_grad_fraction_unscaled'])} without GradScaler, "
        f"{frac(g['fp16_zero_grad_fraction_scaled'])} with it; overflow past 65504: fp16 {flag(g['fp16_overflow'])}, "
        f"bf16 {flag(g['bf16_overflow'])}. torch.compile speedup: {compiled}. NCCL all-reduce bus bandwidth: "
        + (f"{fmt(busbw)} GB/s." if busbw is not None else "not measured (needs 2+ GPUs)."),
        "",
    ]
    if e["informational"]:
        lines += [
            "Recorded, not gated (informational): no bound that a fault would cross; nothing passes or fails on them.",
            "",
        ]
        lines += _table(
            ["measurement", "value", "unit"],
            [[f"`{m['name']}`", fmt(m["value"]), m["unit"]] for m in e["informational"]],
        )
    if e["informational_checks"]:
        lines += ["Checks that document, not gate (informational): no plausible fault can make them fail.", ""]
        lines += _table(
            ["check", "why it gates nothing"], [[f"`{c['test']}`", c["reason"]] for c in e["informational_checks"]]
        )
    lines += _table(["claim", "measured", "verdict"], [[c["claim"], c["measured"], c["verdict"]] for c in e["claims"]])
    gpus = e["hardware"]["gpus"]
    hw = [
        [g["index"], g["name"], g["compute_capability"], fmt(g["memory_gib"]), g["sm_count"], g["driver"]] for g in gpus
    ]
    lines += _table(["#", "GPU", "cc", "GiB", "SMs", "driver"], hw)
    lines += _table(["component", "torch reports", "manifest pin"], [[k, *v] for k, v in e["software_rows"]])
    return lines


def render_markdown(document: dict[str, Any]) -> str:
    entries = [decorate(e) for e in document["entries"]]
    lines = ["## Precision support report", "", "### Image × GPU", "", *_comparison(entries)]
    table = pivot(entries)
    if table:
        lines += _table(["image", *table["gpus"]], [[i, *(c or "-" for c in cells)] for i, cells in table["rows"]])
    for e in entries:
        lines += _entry(e)
    return "\n".join(lines).rstrip() + "\n"
