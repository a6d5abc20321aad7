"""The store arranged for the site: one cell per image x GPU, each run with its report entry and flags."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pytorch_cuda.precision_report.report_model import build_document
from pytorch_cuda.run_store import Stored, Subject
from pytorch_cuda.site.expected import slug
from pytorch_cuda.site.history import CHARTED, Flag, Series, flags, series


@dataclass(frozen=True, eq=False)
class RunView:
    stored: Stored
    entry: dict[str, Any]  # the report's entry for this run (precision_report.model: recommendation, claims...)

    @property
    def sha(self) -> str:
        return self.stored.record.sha256

    @property
    def date(self) -> str:
        return (self.stored.results.started_at or "?")[:16].replace("T", " ")

    @property
    def choice(self) -> str | None:
        return next((r["choice"] for r in self.entry["recommendation"] if r["topic"] == "precision"), None)

    @property
    def failures(self) -> tuple[str, ...]:
        return self.stored.results.failures()

    def x_fp32(self, dtype: str) -> float | None:
        return next((d["x_fp32"] for d in self.entry["dtypes"] if d["dtype"] == dtype), None)

    def amp_speedup(self, dtype: str) -> float | None:
        return next((a["speedup"] for a in self.entry["amp"] if a["dtype"] == dtype), None)


@dataclass(frozen=True, eq=False)
class Cell:
    subject: Subject
    gpu: str
    runs: tuple[RunView, ...]  # oldest first
    history: tuple[tuple[str, tuple[Series, ...]], ...]  # (section title, its metrics' series)
    flags: tuple[Flag, ...]

    @property
    def key(self) -> str:
        return f"{self.subject.key}--{slug(self.gpu)}"

    @property
    def last(self) -> RunView:
        return self.runs[-1]

    @property
    def advised(self) -> RunView | None:
        """The latest run, not under an injected fault, that measured the GEMMs behind its recommendation."""
        measured = [r for r in self.runs if r.choice and r.x_fp32("bf16") is not None and r.stored.record.fault is None]
        return measured[-1] if measured else None

    @property
    def judged(self) -> RunView | None:
        """The clean run that judged most of the article's claims (the latest of those), or None."""
        scored = [(sum(c["verdict"] in ("confirmed", "refuted") for c in r.entry["claims"]), i, r)
                  for i, r in enumerate(self.runs) if r.stored.record.fault is None]  # fmt: skip
        best = max(scored, key=lambda t: (t[0], t[1]), default=None)
        return best[2] if best is not None and best[0] > 0 else None

    def last_flags(self) -> list[Flag]:
        return [f for f in self.flags if f.run is self.last.stored]


def _view(stored: Stored) -> RunView:
    document = build_document([stored.results])
    return RunView(stored, document["entries"][0])


def build_cells(runs: Sequence[Stored]) -> list[Cell]:
    grouped: dict[tuple[str, str], list[Stored]] = {}
    for run in runs:
        grouped.setdefault((run.record.subject.key, run.gpu), []).append(run)
    cells = []
    for (_, gpu), members in sorted(grouped.items()):
        history = tuple(
            (title, tuple(s for name in names if (s := series(members, name)) is not None)) for title, names in CHARTED
        )
        cells.append(
            Cell(
                members[0].record.subject,
                gpu,
                tuple(_view(m) for m in members),
                tuple((t, s) for t, s in history if s),
                tuple(flags(members)),
            )
        )
    return cells


def _run_json(run: RunView) -> dict[str, Any]:
    record = run.stored.record
    return {"sha256": run.sha, "started_at": run.stored.results.started_at, "fault": record.fault,
            "source_name": record.source_name, "report_entry": run.entry}  # fmt: skip


def _flag_json(flag: Flag) -> dict[str, Any]:
    return {"run": flag.run.record.sha256, "baseline": flag.baseline.record.sha256, "what": flag.what,
            "old": flag.old, "new": flag.new, "note": flag.note}  # fmt: skip


def cell_json(cell: Cell) -> dict[str, Any]:
    """The cell's download: every run's report entry, its fault and sha256, and the regressions flagged."""
    return {
        "kind": "pytorch-cuda-site-cell",
        "schema": 1,
        "subject": asdict(cell.subject),
        "gpu": cell.gpu,
        "runs": [_run_json(r) for r in cell.runs],
        "regressions": [_flag_json(f) for f in cell.flags],
    }


def latest_regressions(cells: Sequence[Cell]) -> list[dict[str, Any]]:
    """The regressions of each cell's latest run, one row each with a stable title (the nightly's issues)."""
    rows = []
    for cell in cells:
        for flag in cell.last_flags():
            title = f"Regression: {flag.what} on {cell.gpu} ({cell.subject.label})"
            rows.append({"title": title, "cell": cell.key, "gpu": cell.gpu, "subject": cell.subject.label,
                         "page": f"gpu/{slug(cell.gpu)}.html#regressions-{cell.key}", **_flag_json(flag)})  # fmt: skip
    return rows
