"""The precision summary printed at the end of every in-image `conformance` run.

``python -m conformance.support.results.summary RESULTS.json`` prints it and writes ``summary.md``
beside the results file. Standard library only (the image has no plotting stack).
It never fails the run: whatever happens, it exits 0 and says what it could not do.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from pytorch_cuda_contract import paths
from pytorch_cuda_contract.advice import Assessment, assess, fmt
from pytorch_cuda_contract.results_file import ConformanceResults, ResultsFileError, load_results

SUMMARY_HEADER = ("dtype", "native?", "GEMM TFLOP/s", "% of peak", "x fp32", "error vs fp64")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def dtype_rows(a: Assessment) -> list[tuple[str, ...]]:
    return [(r.dtype, r.verdict, fmt(r.gemm_tflops), _pct(r.pct_peak), fmt(r.x_fp32), fmt(r.error)) for r in a.dtypes]


def amp_rows(a: Assessment) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for r in a.amp:
        speed = "1x" if r.dtype == "fp32" and r.step_ms is not None else f"{fmt(r.speedup)}x"
        saving = "-" if r.mem_saving_pct is None else f"{-r.mem_saving_pct:+.0f}%"
        rows.append((r.dtype, fmt(r.step_ms), speed, fmt(r.peak_mem_mib), saving))
    return rows


AMP_HEADER = ("AMP", "step ms", "x fp32", "peak MiB", "memory vs fp32")


def status_line(results: ConformanceResults) -> str:
    counts = results.counts()
    shown = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(counts.items())) or "no tests"
    partial = "" if results.complete else "; the run is incomplete, so some numbers below may be missing"
    return f"{shown}{partial}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=False)]
    return ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False)).rstrip() for row in (header, *rows)]


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _gpu_title(a: Assessment) -> str:
    if a.gpu is None:
        return "no GPU"
    return f"{a.gpu.name}, cc {a.gpu.compute_capability or '?'}"


def render_text(results: ConformanceResults, a: Assessment) -> str:
    lines = [f"== precision summary ({_gpu_title(a)}) ==", f"tests: {status_line(results)}"]
    if a.dtypes:
        lines += ["", *_table(SUMMARY_HEADER, dtype_rows(a))]
    if any(r.step_ms is not None for r in a.amp):
        lines += ["", *_table(AMP_HEADER, amp_rows(a))]
    lines += ["", "recommendation:"]
    for line in a.recommendation:
        lines.append(f"  * {line.text}" + (f" [{line.numbers}]" if line.numbers else ""))
    lines += ["", "the article's claims:"]
    lines += [f"  {c.verdict:<20} {c.claim}: {c.measured}" for c in a.claims]
    lines += [f"  missing: {item}" for item in results.missing]
    return "\n".join(lines)


def render_summary_markdown(results: ConformanceResults, a: Assessment) -> str:
    torch = results.environment.get("torch") or "?"
    lines = [f"## Precision summary: {_gpu_title(a)}", "", f"torch {torch}; tests: {status_line(results)}", ""]
    if a.dtypes:
        lines += [*_md_table(SUMMARY_HEADER, dtype_rows(a)), ""]
    if any(r.step_ms is not None for r in a.amp):
        lines += [*_md_table(AMP_HEADER, amp_rows(a)), ""]
    lines += ["### Recommendation", ""]
    lines += [f"- **{line.text}**" + (f" ({line.numbers})" if line.numbers else "") for line in a.recommendation]
    lines += ["", "### The article's claims", ""]
    lines += _md_table(("claim", "measured", "verdict"), [(c.claim, c.measured, c.verdict) for c in a.claims])
    if results.missing:
        lines += ["", "Missing from the results file: " + "; ".join(results.missing)]
    return "\n".join(lines) + "\n"


def summarise(path: Path) -> int:
    """Print the summary and write summary.md beside ``path``; always 0."""
    try:
        results = load_results(path)
    except ResultsFileError as error:
        print(f"precision summary: not produced.\n{error.paragraph()}", file=sys.stderr)
        return 0
    assessment = assess(results)
    print(render_text(results, assessment))
    target = path.with_name(paths.SUMMARY_FILE)
    try:
        target.write_text(render_summary_markdown(results, assessment), encoding="utf-8")
    except OSError as error:
        print(f"precision summary: could not write {target} ({error.strerror})", file=sys.stderr)
        return 0
    print(f"precision summary: {target}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    default = Path(paths.DEFAULT_RESULTS_DIR) / paths.RESULTS_FILE
    path = Path(args[0]) if args else default
    try:
        return summarise(path)
    except Exception as error:  # the summary must never turn a run into a crash
        print(f"precision summary: not produced ({type(error).__name__}: {error})", file=sys.stderr)
        return 0


if __name__ == "__main__":
    sys.exit(main())
