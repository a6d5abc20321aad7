"""A precision-check report (``precision-check ... --json``) as an HTML page: the verdict, the table the
terminal shows, the facts (fp32's noise floor, the gradients, GradScaler), and the loss curves.

Reads the file with pytorch_cuda_contract.precision_check_file and shows the lines precision-check judged and
wrote into it (``display``, version 5): nothing is judged here, so the host needs neither torch nor
precision-check. An older file is refused with the command that upgrades it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jinja2
from matplotlib.figure import Figure

from pytorch_cuda.precision_report.charts import COLOURS, svg_text
from pytorch_cuda_contract.precision_check_file import (
    SCHEMA,
    UPGRADE_COMMAND,
    VERDICT_KIND_MEANING,
    CheckFile,
    OldCheckFileError,
    is_check_file,
    read_check_file,
)

TEMPLATE: Final = "check.html.j2"
# What each verdict kind means, one line each (docs/precision-check.md says more).
KIND_MEANING: Final = VERDICT_KIND_MEANING


@dataclass(frozen=True)
class CheckPageError(Exception):
    """A precision-check report that cannot be read: the cause and the fix."""

    cause: str
    fix: str


def is_check_report(doc: object) -> bool:
    return is_check_file(doc)


def read_check_report(path: Path, text: str) -> CheckFile:
    """The report in ``text`` (from ``path``); a malformed or old one raises CheckPageError naming what is wrong."""
    try:
        return read_check_file(text)
    except OldCheckFileError as error:
        raise CheckPageError(
            f"{path} is a {SCHEMA} report that cannot be read ({error})",
            f"run precision-check again with --json, or upgrade the file where precision-check is installed (in "
            f"the image): `{UPGRADE_COMMAND}`",
        ) from None
    except (ValueError, KeyError, TypeError) as error:
        what = f"missing field {error}" if isinstance(error, KeyError) else str(error)
        raise CheckPageError(
            f"{path} is a {SCHEMA} report that cannot be read ({what})",
            "pass the file `precision-check ... --json PATH` wrote, unchanged; a report from a newer "
            "precision-check needs a newer pytorch-cuda",
        ) from None


def _finite(losses: tuple[float | None, ...]) -> tuple[list[int], list[float]]:
    """The steps with a finite loss, and those losses (a non-finite step leaves a gap)."""
    points = [(step, loss) for step, loss in enumerate(losses) if loss is not None]
    return [step for step, _ in points], [loss for _, loss in points]


STYLES: Final = {"dashed": "--", "dotted": ":"}


def loss_curves(report: CheckFile) -> str:
    """Each dtype's loss per step, and fp32's control run dashed: where they part is where precision shows."""
    figure = Figure(figsize=(8, 3.8), layout="constrained")
    ax = figure.add_subplot()
    runs = [curve for curve in report.curves if curve.style == "solid"]
    for colour, curve in zip(COLOURS, runs, strict=False):
        steps, losses = _finite(curve.losses)
        ax.plot(steps, losses, label=curve.label, color=colour, linewidth=1.4)
    for curve in report.curves:
        if curve.style in STYLES:
            steps, losses = _finite(curve.losses)
            ax.plot(steps, losses, label=curve.label, color="#6b7280", linestyle=STYLES[curve.style], linewidth=1.0)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    return svg_text(figure)


def render_check_page(report: CheckFile, source: str) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    context: dict[str, Any] = {
        "report": report,
        "device": report.device,
        "source": source,
        "header": report.display.header,
        "rows": report.display.rows,
        "facts": report.display.facts,
        "kind_meaning": report.display.kind_meaning,
        "chart": loss_curves(report),
        "numbers": json.dumps(report.verdict.numbers, indent=1, sort_keys=True),
    }
    return env.get_template(TEMPLATE).render(context)
