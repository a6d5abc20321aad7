"""The store arranged for the site: one cell per history (image variant x GPU model x driver branch: a nightly's
new digest joins its cell), read one history at a time through the store's indexed reads: every run's sha256,
time and purpose (heads, no results), the judgement of the window the judge kept (decay/windowed.py: its views),
and the last SHOWN_RUNS runs read whole, each with its report entry and what the judgement finds in it. The judge
keeps its window so that the last SHOWN_RUNS runs are always judged exactly (as a full read judges them): what the
pages show of a history is a function of the store, however the window was kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

from pytorch_cuda.decay import DecayFinding, Judged, judge_history
from pytorch_cuda.decay.windowed import SHOWN_RUNS, judge_window_of, read_window
from pytorch_cuda.precision_report.report_model import build_document
from pytorch_cuda.run_store import RunSubject, Stored
from pytorch_cuda.run_store.backend import RunHead, RunStore
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
    runs: tuple[RunView, ...]  # the last SHOWN_RUNS runs, oldest first, every purpose: what the pages show
    history: tuple[tuple[str, tuple[Series, ...]], ...]  # (section title, its metrics' series): shown nightly runs
    flags: tuple[Flag, ...]  # on the shown runs
    judged: Judged  # the window read: the noise, "no history yet", the verdict on the latest run
    heads: tuple[RunHead, ...]  # every run of the history, oldest first

    @cached_property
    def shown(self) -> dict[str, RunView]:
        """The shown runs by sha256."""
        return {r.sha: r for r in self.runs}

    @property
    def nightly_runs(self) -> int:
        return sum(1 for h in self.heads if h.purpose == "nightly")

    @property
    def windowed(self) -> bool:
        """Older runs than the shown ones are stored (the pages say so)."""
        return len(self.runs) < len(self.heads)

    def found(self, run: RunView) -> tuple[DecayFinding, ...]:
        """The decay model's findings on a shown run."""
        return tuple(f for f in self.judged.findings if f.run.record.sha256 == run.sha)

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
        latest = nightly[-1].record.sha256 if nightly else None
        return [f for f in self.flags if f.run.record.sha256 == latest and f.status in statuses]

    def experiments(self) -> list[Flag]:
        """Findings on fault and control runs: what the history flags when a fault is injected."""
        return [f for f in self.flags if f.status in ("fault", "control")]


def run_view(stored: Stored) -> RunView:
    """A run with its report entry."""
    document = build_document([stored.results])
    entry = dict(document["entries"][0])
    if "source" in entry:  # the store's own path on the machine that built the site: published as the store's name
        entry["source"] = f"runs/{stored.record.subject.key}/{stored.record.sha256}.json"
    return RunView(stored, entry)


def _subject(judged: Judged) -> RunSubject:
    latest = judged.runs[-1].record.subject
    label = judged.key.variant
    return RunSubject(latest.kind, slug(label), label, latest.digest, latest.torch, latest.cuda)


def _cell(judged: Judged, heads: list[RunHead], whole: list[Stored]) -> Cell:
    shown = {s.record.sha256: s for s in whole}
    charted = [(title, [series(judged, name, shown) for name in names]) for title, names in CHARTED]
    history = tuple((title, tuple(s for s in found if s is not None)) for title, found in charted)
    views = tuple(run_view(m) for m in whole)
    return Cell(_subject(judged), judged.key.gpu, views, tuple((t, s) for t, s in history if s),
                tuple(flags(judged, shown)), judged, tuple(heads))  # fmt: skip


def build_cells(store: RunStore, shown: int = SHOWN_RUNS, *, judge: int | None = None) -> list[Cell]:
    """Every history of ``store``, by key: its last ``shown`` runs (at most SHOWN_RUNS: the judge keeps them exact);
    ``judge``: judge each history first, as `results judge` does with that many runs in its window's tail (it
    keeps the window), and show what a read of the window it kept gives, from the runs already read."""
    if not 0 < shown <= SHOWN_RUNS:
        raise ValueError(f"shown ({shown}) must be between 1 and {SHOWN_RUNS}")
    accepted = store.accepted()
    cells = []
    for text in store.histories():
        heads, whole = store.heads(text), store.latest(text, shown)
        # every run shown: judged whole, one read (too short for the judge to keep a window); else the judge's
        # window (views), exact over the shown runs: read as the judge left it, or judged here and kept
        if len(heads) <= len(whole):
            judged = judge_history(whole, accepted)
        elif judge is not None:
            judged = judge_window_of(store, text, accepted, judge).next_read()
        else:
            judged = read_window(store, text, accepted).judged
        cells.append(_cell(judged, heads, whole))
    return sorted(cells, key=lambda c: c.history_key)


def _run_json(run: RunView) -> dict[str, Any]:
    record = run.stored.record
    return {"sha256": run.sha, "started_at": run.stored.results.started_at, "purpose": run.stored.purpose,
            "fault": record.fault, "control": record.control, "identity": asdict(run.stored.identity),
            "report_entry": run.entry}  # fmt: skip


def _flag_json(flag: Flag) -> dict[str, Any]:
    return {"run": flag.run.record.sha256, "what": flag.what, "old": flag.old, "new": flag.new, "note": flag.note,
            "status": flag.status, "hosts": list(flag.hosts), "runs": list(flag.runs)}  # fmt: skip


def cell_json(cell: Cell) -> dict[str, Any]:
    """The cell's download: every stored run (sha256, time, purpose), the shown runs' report entries with their
    faults, and the regressions flagged on them."""
    return {
        "kind": "pytorch-cuda-site-cell",
        "schema": 3,
        "history": asdict(cell.history_key),
        "subject": asdict(cell.subject),
        "gpu": cell.gpu,
        "noise": [asdict(n) for n in cell.judged.noise],
        "stored": [asdict(h) for h in cell.heads],
        "shown": f"the last {len(cell.runs)} of {len(cell.heads)} runs: their report entries and what is flagged",
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
