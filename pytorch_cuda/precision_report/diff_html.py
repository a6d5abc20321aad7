"""The HTML of `build.py report --diff OLD NEW --html PATH`: the same diff as the Markdown, as a page in the
precision report's style, each regression beyond noise marked (its row tinted, its status in red)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import jinja2

from pytorch_cuda.precision_report.diff import Diff
from pytorch_cuda.precision_report.diff_markdown import RUN_LABELS, metric_cells, run_facts

TEMPLATE: Final = "diff.html.j2"
CSS: Final = {
    "regression": "s-regression",
    "improved": "s-improved",
    "within noise": "s-noise",
    "same": "s-same",
    "changed": "s-same",
    "only in one run": "s-one",
}


def render_diff_html(diff: Diff) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    old, new = run_facts(diff.old), run_facts(diff.new)
    sections = [
        (section, [(metric_cells(row)[:5], row.status) for row in diff.metrics if row.section == section])
        for section in dict.fromkeys(row.section for row in diff.metrics)
    ]
    return env.get_template(TEMPLATE).render(
        old_source=diff.old.source,
        new_source=diff.new.source,
        regressions=diff.regressions,
        runs=list(zip(RUN_LABELS, old, new, strict=True)),
        mismatches=diff.mismatches,
        sections=sections,
        verdicts=diff.verdicts,
        tests=diff.tests,
        css=CSS,
    )
