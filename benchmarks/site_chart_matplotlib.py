"""The site's history charts as they were drawn before (matplotlib), kept for benchmarks/site_build.py to time
against the SVG drawn directly (pytorch_cuda/site/chart.py). Not used by the site."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from matplotlib.figure import Figure

from pytorch_cuda.decay.limits import STEP_SIGMAS
from pytorch_cuda.precision_report.charts import svg_text
from pytorch_cuda.site.history import Series

BAND: Final = "#bfdbfe"
LINE: Final = "#2563eb"
BAD: Final = "#dc2626"
COLUMNS: Final = 4


def _short_date(started_at: str | None) -> str:
    return (started_at or "?")[5:16].replace("T", " ")


def history_chart(title: str, all_series: Sequence[Series]) -> str | None:
    """Values per nightly run (a red cross: a confirmed or suspect regression), and the band each run was judged
    against (shaded). Fault, control and partial runs are not drawn (the GPU page lists what they flag)."""
    shown = [s for s in all_series if s.points]
    if not shown:
        return None
    columns = min(COLUMNS, len(shown))
    rows = -(-len(shown) // columns)
    figure = Figure(figsize=(3.2 * columns, 2.7 * rows), layout="constrained")
    axes = list(figure.subplots(rows, columns, squeeze=False).flat)
    for spare in axes[len(shown) :]:
        spare.set_visible(False)
    for ax, s in zip(axes, shown, strict=False):
        xs = list(range(len(s.points)))
        ys = [p.value for p in s.points]
        ax.plot(xs, ys, color=LINE, linewidth=1.0, zorder=2)
        for x, p in zip(xs, s.points, strict=True):
            if p.noise is not None:
                reach = STEP_SIGMAS * p.noise.spread * p.noise.centre
                low, high = p.noise.centre - reach, p.noise.centre + reach
                ax.fill_between([x - 0.35, x + 0.35], low, high, color=BAND, zorder=1, linewidth=0)
            if p.regression:
                ax.scatter([x], [p.value], marker="X", s=60, color=BAD, zorder=3)
            else:
                ax.scatter([x], [p.value], s=22, zorder=3, color=LINE, edgecolors=LINE)
        ax.set_xticks(xs, [_short_date(p.run.results.started_at) for p in s.points], rotation=35, fontsize=6.5)
        ax.set_title(s.metric + ("" if s.judged else " (charted, not judged)"), fontsize=8)
        ax.set_ylabel(s.unit, fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
        ax.margins(x=0.15, y=0.25)
        ax.spines[["top", "right"]].set_visible(False)
    figure.suptitle(
        f"{title}: shaded, the learned centre ± {STEP_SIGMAS:g} sigma each run was judged against; X, a regression",
        fontsize=8,
    )
    return svg_text(figure)
