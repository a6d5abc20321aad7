"""Render the site's pages (jinja2 templates beside this module) from the cells."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import jinja2

from pytorch_cuda.precision_report.view import times, vclass
from pytorch_cuda.site.cells import Cell, cell_json, latest_regressions
from pytorch_cuda.site.chart import Chart, history_chart
from pytorch_cuda.site.expected import expected_table, slug

TEMPLATES: Final = Path(__file__).with_name("templates")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no tests"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(times=times, vclass=vclass, slug=slug, counts=_counts, number=_number)
    return environment


def _markdown_cell(cell: Cell | None) -> str:
    if cell is None:
        return "not measured"
    a, parts = cell.advised, []
    if a is not None:
        parts.append(f"**{a.choice}**; GEMM bf16 {times(a.x_fp32('bf16'))}, fp16 {times(a.x_fp32('fp16'))} fp32")
        parts.append(f"AMP bf16 {times(a.amp_speedup('bf16'))}, fp16 {times(a.amp_speedup('fp16'))}")
    parts.append(f"last run {cell.last.date} UTC")
    if cell.last.failures:
        parts.append(f"{len(cell.last.failures)} test(s) failed")
    if cell.last_flags():
        parts.append(f"{len(cell.last_flags())} regression(s) beyond noise")
    if a is not None:
        gemm = a.stored.results.number("gemm.bf16.tflops")
        if gemm is not None:
            parts.insert(1, f"GEMM bf16 {gemm:.0f} TFLOP/s")
    return "; ".join(parts)


def _by_variant_and_gpu(cells: Sequence[Cell]) -> dict[tuple[str, str], Cell]:
    """The home table's cell per variant x GPU: the history with the most nightly runs (another driver branch, or
    a fault run's own key, is on the GPU page)."""
    by: dict[tuple[str, str], Cell] = {}
    for cell in sorted(cells, key=lambda c: len(c.judged.nightly)):
        by[(cell.subject.key, cell.gpu)] = cell
    return by


def _arch_lists(cells: Sequence[Cell]) -> dict[str, list[str]]:
    """Each image variant's CUDA arch list, from its latest run that recorded one (bare hosts are not images)."""
    lists: dict[str, list[str]] = {}
    for cell in cells:
        if cell.subject.kind != "image":
            continue
        for run in cell.runs:
            archs = run.stored.results.environment.get("arch_list")
            if isinstance(archs, list) and archs:
                lists[cell.subject.label] = [str(a) for a in archs]
    return lists


def home_markdown(cells: Sequence[Cell]) -> str:
    """The home table in Markdown (README shows it)."""
    gpus = sorted({c.gpu for c in cells})
    by = _by_variant_and_gpu(cells)
    lines = ["| image | " + " | ".join(gpus) + " |", "|---" * (len(gpus) + 1) + "|"]
    for subject in {c.subject.key: c.subject for c in cells}.values():
        row = [_markdown_cell(by.get((subject.key, g))) for g in gpus]
        lines.append(f"| {subject.label} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def render_pages(cells: Sequence[Cell], run_count: int, chart: Chart = history_chart) -> dict[str, str]:
    """Relative path -> file content: index, expected, a page per GPU, image and run, a JSON per cell, and
    regressions.json (the regressions of each cell's latest run)."""
    env = _environment()
    common: dict[str, Any] = {}  # a page's bytes depend on its own inputs only: the run count is the home page's
    gpus = sorted({c.gpu for c in cells})
    subjects = list({c.subject.key: c.subject for c in cells}.values())
    by = _by_variant_and_gpu(cells)
    rows = [(s, [by.get((s.key, g)) for g in gpus]) for s in subjects]
    files = {
        "index.html": env.get_template("index.html.j2").render(
            title="every image × GPU", root="", gpus=gpus, rows=rows, run_count=run_count
        ),
        "expected.html": env.get_template("expected.html.j2").render(
            title="can I use bf16?", root="", rows=expected_table(gpus, _arch_lists(cells)), **common
        ),
    }
    files["home.md"] = home_markdown(cells)
    files["regressions.json"] = json.dumps(latest_regressions(cells), indent=1) + "\n"
    charts = {c.key: [(t, svg, s) for t, s in c.history if (svg := chart(t, s)) is not None] for c in cells}
    for gpu in gpus:
        mine = [c for c in cells if c.gpu == gpu]
        files[f"gpu/{slug(gpu)}.html"] = env.get_template("gpu.html.j2").render(
            title=gpu, root="../", gpu=gpu, cells=mine, charts=charts, **common
        )
    for subject in subjects:
        mine = [c for c in cells if c.subject.key == subject.key]
        files[f"image/{subject.key}.html"] = env.get_template("image.html.j2").render(
            title=subject.label, root="../", subject=subject, cells=mine, **common
        )
    for cell in cells:
        files[f"data/{cell.key}.json"] = json.dumps(cell_json(cell), indent=1) + "\n"
        for run in cell.runs:
            files[f"run/{run.sha}.html"] = env.get_template("run.html.j2").render(
                title=f"run {run.sha[:12]}", root="../", run=run, cell=cell, **common
            )
    return files
