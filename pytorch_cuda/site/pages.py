"""Render the site's pages (jinja2 templates beside this module) from the cells."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Final

import jinja2

from pytorch_cuda.precision_report.view import times, vclass
from pytorch_cuda.site.cells import Cell, RunView, cell_json, latest_regressions
from pytorch_cuda.site.chart import Chart, history_chart
from pytorch_cuda.site.expected import expected_table, slug
from pytorch_cuda.site.page_inputs import cell_inputs, code_digest, digest, run_inputs

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
    for cell in sorted(cells, key=lambda c: c.nightly_runs):
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


@dataclass(frozen=True)
class Page:
    """One file of the site: the digest of what its bytes depend on, and how to render them."""

    inputs: str  # page_inputs.digest(...): equal digests, equal bytes
    render: Callable[[], str]


OlderRun = Callable[[Cell, str], RunView]  # a run older than its cell's shown runs, read whole (site_writer)


def plan_pages(
    cells: Sequence[Cell], accepted: Sequence[str], chart: Chart = history_chart, older: OlderRun | None = None
) -> dict[str, Page]:
    """Relative path -> page: index, expected, a page per GPU, image and run, a JSON per cell, and
    regressions.json (the regressions of each cell's latest run); nothing is rendered until a page's ``render``
    is called. ``accepted``: the sha256 of every accepted regression (they change the judgement); ``older``: how a
    run older than the shown ones is read, where its page is rendered (None: those pages are left out)."""
    env = _environment()
    code = code_digest(chart)
    run_count = sum(len(c.heads) for c in cells)
    gpus = sorted({c.gpu for c in cells})
    subjects = list({c.subject.key: c.subject for c in cells}.values())
    by = _by_variant_and_gpu(cells)
    rows = [(s, [by.get((s.key, g)) for g in gpus]) for s in subjects]
    every = digest(code, [cell_inputs(c) for c in cells], list(accepted))

    def index() -> str:
        return env.get_template("index.html.j2").render(
            title="every image × GPU", root="", gpus=gpus, rows=rows, run_count=run_count
        )

    def expected() -> str:
        table = expected_table(gpus, _arch_lists(cells))
        return env.get_template("expected.html.j2").render(title="can I use bf16?", root="", rows=table)

    files = {
        "index.html": Page(every, index),
        "expected.html": Page(every, expected),
        "home.md": Page(every, lambda: home_markdown(cells)),
        "regressions.json": Page(every, lambda: json.dumps(latest_regressions(cells), indent=1) + "\n"),
    }
    for gpu in gpus:
        mine = [c for c in cells if c.gpu == gpu]
        inputs = digest(code, [cell_inputs(c) for c in mine], list(accepted))
        files[f"gpu/{slug(gpu)}.html"] = _gpu_page(env, gpu, mine, inputs, chart)
    for subject in subjects:
        mine = [c for c in cells if c.subject.key == subject.key]
        files[f"image/{subject.key}.html"] = Page(
            digest(code, [cell_inputs(c) for c in mine], list(accepted)),
            partial(
                env.get_template("image.html.j2").render, title=subject.label, root="../", subject=subject, cells=mine
            ),
        )
    for cell in cells:
        files[f"data/{cell.key}.json"] = Page(
            digest(code, cell_inputs(cell), list(accepted)), partial(_cell_json_text, cell)
        )
        for head in cell.heads:
            run = cell.shown.get(head.sha256)
            if run is None and older is None:
                continue
            files[f"run/{head.sha256}.html"] = Page(
                run_inputs(code, cell, head.sha256), partial(_run_page, env, cell, head.sha256, run, older)
            )
    return files


def _run_page(env: jinja2.Environment, cell: Cell, sha: str, run: RunView | None, older: OlderRun | None) -> str:
    """A run's page: ``run`` where it is shown, else read by ``older`` (plan_pages plans no such page without it)."""
    shown = run is not None
    if run is None:
        assert older is not None
        run = older(cell, sha)
    return env.get_template("run.html.j2").render(title=f"run {sha[:12]}", root="../", run=run, cell=cell, shown=shown)


def _cell_json_text(cell: Cell) -> str:
    return json.dumps(cell_json(cell), indent=1) + "\n"


def _gpu_page(env: jinja2.Environment, gpu: str, mine: list[Cell], inputs: str, chart: Chart) -> Page:
    def render() -> str:
        charts = {c.key: [(t, svg, s) for t, s in c.history if (svg := chart(t, s)) is not None] for c in mine}
        return env.get_template("gpu.html.j2").render(title=gpu, root="../", gpu=gpu, cells=mine, charts=charts)

    return Page(inputs, render)
