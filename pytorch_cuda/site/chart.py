"""History charts: one small multiple per metric, nightly runs oldest to newest, the band each run was judged
against (the learned centre +- the step limit), a regression marked with a red cross.

SVG written directly (text stays text, no date, no ids, no JavaScript): a site of a few hundred charts builds in
well under a second, where matplotlib took most of the 12-21 s (benchmarks/site_build.py times both).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Final

from pytorch_cuda.decay.limits import STEP_SIGMAS
from pytorch_cuda.site.history import Point, Series

BAND: Final = "#bfdbfe"
LINE: Final = "#2563eb"
BAD: Final = "#dc2626"
INK: Final = "#334155"
COLUMNS: Final = 4
WIDTH: Final = 250  # one panel
HEIGHT: Final = 190
LEFT, RIGHT, TOP, BOTTOM = 46, 8, 30, 44
HEADER: Final = 34
Chart = Callable[[str, Sequence[Series]], str | None]  # a section title and its series -> one SVG (None: no points)


def _short_date(started_at: str | None) -> str:
    return (started_at or "?")[5:16].replace("T", " ")


def _band(p: Point) -> tuple[float, float] | None:
    if p.noise is None:
        return None
    reach = STEP_SIGMAS * p.noise.spread * p.noise.centre
    return p.noise.centre - reach, p.noise.centre + reach


def _panel(s: Series, x0: float, y0: float) -> list[str]:
    values = [p.value for p in s.points]
    bands = [b for p in s.points if (b := _band(p)) is not None]
    low = min(values + [b[0] for b in bands])
    high = max(values + [b[1] for b in bands])
    pad = (high - low) * 0.12 or abs(high) * 0.05 or 1.0
    low, high = low - pad, high + pad
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / max(len(s.points), 1)

    def x(i: int) -> float:
        return x0 + LEFT + step * (i + 0.5)

    def y(v: float) -> float:
        return y0 + TOP + plot_h * (high - v) / (high - low)

    title = s.metric + ("" if s.judged else " (charted, not judged)")
    out = [f'<text x="{x0 + WIDTH / 2:.1f}" y="{y0 + 16}" text-anchor="middle" font-size="11">{escape(title)}</text>']
    axis_x = x0 + LEFT
    out.append(f'<line x1="{axis_x}" y1="{y0 + TOP}" x2="{axis_x}" y2="{y0 + TOP + plot_h}" stroke="{INK}"/>')
    for v in (low + pad, high - pad):
        out.append(f'<text x="{axis_x - 4}" y="{y(v) + 3:.1f}" text-anchor="end" font-size="9">{v:.4g}</text>')
    out.append(
        f'<text x="{x0 + 10}" y="{y0 + TOP + plot_h / 2:.1f}" font-size="9" text-anchor="middle" '
        f'transform="rotate(-90 {x0 + 10} {y0 + TOP + plot_h / 2:.1f})">{escape(s.unit)}</text>'
    )
    for i, p in enumerate(s.points):
        band = _band(p)
        if band is not None:
            out.append(
                f'<rect x="{x(i) - step * 0.35:.1f}" y="{y(band[1]):.1f}" width="{step * 0.7:.1f}" '
                f'height="{y(band[0]) - y(band[1]):.1f}" fill="{BAND}"/>'
            )
    line = " ".join(f"{x(i):.1f},{y(p.value):.1f}" for i, p in enumerate(s.points))
    out.append(f'<polyline points="{line}" fill="none" stroke="{LINE}" stroke-width="1.2"/>')
    for i, p in enumerate(s.points):
        cx, cy = x(i), y(p.value)
        label = f"{_short_date(p.run.results.started_at)}: {p.value:.4g} {s.unit}".strip()
        if p.regression:
            out.append(
                f'<g stroke="{BAD}" stroke-width="2.2"><title>{escape(label)} (regression)</title>'
                f'<line x1="{cx - 4:.1f}" y1="{cy - 4:.1f}" x2="{cx + 4:.1f}" y2="{cy + 4:.1f}"/>'
                f'<line x1="{cx - 4:.1f}" y1="{cy + 4:.1f}" x2="{cx + 4:.1f}" y2="{cy - 4:.1f}"/></g>'
            )
        else:
            out.append(
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="2.6" fill="{LINE}"><title>{escape(label)}</title></circle>'
            )
        every = max(1, -(-len(s.points) // 8))  # at most 8 dates under a panel; each point's own in its tooltip
        if i % every == 0 or i == len(s.points) - 1:
            ty = y0 + TOP + plot_h + 8
            out.append(
                f'<text x="{cx:.1f}" y="{ty:.1f}" font-size="7.5" text-anchor="end" '
                f'transform="rotate(-35 {cx:.1f} {ty:.1f})">{escape(_short_date(p.run.results.started_at))}</text>'
            )
    return out


def history_chart(title: str, all_series: Sequence[Series]) -> str | None:
    """Values per nightly run (a red cross: a confirmed or suspect regression), and the band each run was judged
    against (shaded). Fault and control runs are not drawn (the GPU page lists what they flag)."""
    shown = [s for s in all_series if s.points]
    if not shown:
        return None
    columns = min(COLUMNS, len(shown))
    rows = -(-len(shown) // columns)
    width, height = columns * WIDTH, HEADER + rows * HEIGHT
    caption = f"shaded, the learned centre ± {STEP_SIGMAS:g} sigma each run was judged against; X, a regression"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'font-family="sans-serif" fill="{INK}" role="img" aria-label="{escape(title)}">',
        f'<text x="{width / 2}" y="13" text-anchor="middle" font-size="11">{escape(title)}</text>',
        f'<text x="{width / 2}" y="27" text-anchor="middle" font-size="9.5">{escape(caption)}</text>',
    ]
    for n, s in enumerate(shown):
        parts += _panel(s, (n % columns) * WIDTH, HEADER + (n // columns) * HEIGHT)
    parts.append("</svg>")
    return "\n".join(parts)
