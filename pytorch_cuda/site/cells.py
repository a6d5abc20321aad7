"""The store arranged for the site: one cell per history (image variant x GPU model x driver branch: a nightly's
new digest joins its cell), each run with its report entry, the decay model's judgement and the flags."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pytorch_cuda.decay import Judged, judge_store
from pytorch_cuda.precision_report.report_model import build_document
from pytorch_cuda.run_store import RunSubject, Stored
from pytorch_cuda.run_store.accepted import Accepted
from pytorch_cuda.run_store.run_identity import HistoryKey
from pytorch_cuda.site.expected import slug
from pytorch_cuda.site.history import ALERT_STATUSES, CHARTED, Flag, Series, flags, series


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
    subject: RunSubject  # the history's variant (key: its slug), with its latest run's digest and versions
    gpu: str
    runs: tuple[RunView, ...]  # oldest first, every purpose
    history: tuple[tuple[str, tuple[Series, ...]], ...]  # (section title, its metrics' series): nightly runs only
    flags: tuple[Flag, ...]
    judged: Judged

    @property
    def key(self) -> str:
        return self.judged.key.slug

    @property
    def history_key(self) -> HistoryKey:
        return self.judged.key

    @property
    def last(self) -> RunView:
        """The latest nightly run (the latest run of any purpose where the history has no nightly run)."""
        nightly = [r for r in self.runs if r.stored.purpose == "nightly"]
        return (nightly or list(self.runs))[-1]

    @property
    def advised(self) -> RunView | None:
        """The latest complete nightly run (no fault, control, failed check or selection) that measured the GEMMs
        behind its recommendation."""
        measured = [
            r
            for r in self.runs
            if r.choice and r.x_fp32("bf16") is not None and r.stored.purpose == "nightly" and not r.stored.partial
        ]
        return measured[-1] if measured else None

    @property
    def claims_run(self) -> RunView | None:
        """The clean run that judged most of the article's claims (the latest of those), or None."""
        scored = [(sum(c["verdict"] in ("confirmed", "refuted") for c in r.entry["claims"]), i, r)
                  for i, r in enumerate(self.runs) if r.stored.purpose == "nightly"]  # fmt: skip
        best = max(scored, key=lambda t: (t[0], t[1]), default=None)
        return best[2] if best is not None and best[0] > 0 else None

    def last_flags(self, statuses: tuple[str, ...] = ALERT_STATUSES) -> list[Flag]:
        """What the home page and the nightly's issues report: the latest nightly run's confirmed findings and
        newly failing tests (a suspect waits for the next run; fault, control and partial runs are on the GPU
        page only)."""
        nightly = self.judged.nightly
        latest = nightly[-1] if nightly else None
        return [f for f in self.flags if f.run is latest and f.status in statuses]

    def experiments(self) -> list[Flag]:
        """Findings on fault and control runs: what the history flags when a fault is injected."""
        return [f for f in self.flags if f.status in ("fault", "control")]


def _view(stored: Stored) -> RunView:
    document = build_document([stored.results])
    entry = dict(document["entries"][0])
    if "source" in entry:  # the store's own path on the machine that built the site: published as the store's name
        entry["source"] = f"runs/{stored.record.subject.key}/{stored.record.sha256}.json"
    return RunView(stored, entry)


def _subject(judged: Judged) -> RunSubject:
    latest = judged.runs[-1].record.subject
    label = judged.key.variant
    return RunSubject(latest.kind, slug(label), label, latest.digest, latest.torch, latest.cuda)


def build_cells(runs: Sequence[Stored], accepted: Sequence[Accepted] = ()) -> list[Cell]:
    cells = []
    for judged in judge_store(runs, accepted):
        history = tuple(
            (title, tuple(s for name in names if (s := series(judged, name)) is not None)) for title, names in CHARTED
        )
        cells.append(
            Cell(
                _subject(judged),
                judged.key.gpu,
                tuple(_view(m) for m in judged.runs),
                tuple((t, s) for t, s in history if s),
                tuple(flags(judged)),
                judged,
            )
        )
    return cells


def _run_json(run: RunView) -> dict[str, Any]:
    record = run.stored.record
    return {"sha256": run.sha, "started_at": run.stored.results.started_at, "purpose": run.stored.purpose,
            "fault": record.fault, "control": record.control, "identity": asdict(run.stored.identity),
            "report_entry": run.entry}  # fmt: skip


def _flag_json(flag: Flag) -> dict[str, Any]:
    return {"run": flag.run.record.sha256, "what": flag.what, "old": flag.old, "new": flag.new, "note": flag.note,
            "status": flag.status, "hosts": list(flag.hosts), "runs": list(flag.runs)}  # fmt: skip


def cell_json(cell: Cell) -> dict[str, Any]:
    """The cell's download: every run's report entry, its fault and sha256, and the regressions flagged."""
    return {
        "kind": "pytorch-cuda-site-cell",
        "schema": 2,
        "history": asdict(cell.history_key),
        "subject": asdict(cell.subject),
        "gpu": cell.gpu,
        "noise": [asdict(n) for n in cell.judged.noise],
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
