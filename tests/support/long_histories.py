"""Histories longer than the judge's window (decay/windowed.py), for the windowed judge's tests on every backend:
a steady one, and one whose GEMM throughput drops 15% early and stays down, a regression open since long before the
window; nights stored in batches, as the nightly stores them, each batch judged on its window and in full."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pytorch_cuda.decay import judge_store
from pytorch_cuda.decay.judge import Judged
from pytorch_cuda.decay.report import judged_document
from pytorch_cuda.decay.windowed import WindowedJudged, judge_windowed
from pytorch_cuda.run_store import ingest, read_store
from pytorch_cuda.run_store.backend import StoreLocation, open_store
from pytorch_cuda.site.site_writer import build_site
from tests.support.synthetic_history import night, wobble

GEMM = "gemm.bf16.tflops"
WINDOW = 30  # the tail the tests judge alone (windowed.WINDOW_RUNS is 60 in use)
NIGHTS = 80
DROP_FROM = 8  # the held drop's first night: 71 nights before the last one, older than twice the window
VERDICT = ("key", "no_history", "latest_confirmed", "noise", "accepted")


def long_nights(folder: Path, nights: int = NIGHTS) -> list[list[Path]]:
    """Each night's two runs (the steady variant, the dropping one), written as files: one list per night."""
    folder.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 1, 1, 3, tzinfo=UTC)
    written = []
    for day in range(nights):
        runs = []
        for variant, drop in (("steady", 1.0), ("dropping", 0.85 if day >= DROP_FROM else 1.0)):
            document: dict[str, Any] = night(day, scale={GEMM: wobble(day) * drop}, host="ab"[day % 2], variant=variant)
            document["started_at"] = (start + timedelta(days=day)).isoformat()
            path = folder / f"{day:04d}-{variant}.json"
            path.write_text(json.dumps(document), encoding="utf-8")
            runs.append(path)
        written.append(runs)
    return written


def verdicts(judged: list[Judged]) -> list[dict[str, Any]]:
    """What the nightly reports of each history: its key, the regressions open on its latest run, its noise, no
    history yet, the accepted regressions."""
    return [{k: h[k] for k in VERDICT} for h in judged_document(judged)["histories"]]


def full_read(store: StoreLocation) -> list[Judged]:
    return judge_store(read_store(store), open_store(store).accepted())


def store_and_judge(store: StoreLocation, batches: list[list[Path]]) -> list[list[WindowedJudged]]:
    """Each batch of nights ingested, then the store judged on its windows (which keeps them)."""
    judged = []
    for batch in batches:
        ingest(batch, store)
        judged.append(judge_windowed(open_store(store), WINDOW))
    return judged


def batches_of(nights: list[list[Path]]) -> list[list[Path]]:
    """The first 64 nights at once, then two batches of 8 nights."""
    flat = [[p for n in nights[a:b] for p in n] for a, b in ((0, 64), (64, 72), (72, 80))]
    return [batch for batch in flat if batch]


def site_files(folder: Path) -> dict[str, bytes]:
    """Every file of a built site, by its path in the site."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def site_judge_matches_judge_then_site(together: StoreLocation, apart: Path, folder: Path) -> None:
    """The long nights stored night by night in both stores: `site --judge` on ``together`` writes the pages and
    keeps the windows that `results judge` then `site` do on ``apart`` (SQLite), and its incremental site is the
    full build byte for byte."""
    for n, batch in enumerate(batches_of(long_nights(folder / "nights"))):
        ingest(batch, together)
        ingest(batch, apart)
        judge_windowed(open_store(apart), WINDOW)
        build_site(apart, folder / "site-apart")
        assert build_site(together, folder / "site", judge=WINDOW).incremental == (n > 0)
        assert site_files(folder / "site") == site_files(folder / "site-apart")
        a, b = open_store(apart), open_store(together)
        assert [b.judge_window(t) for t in b.histories()] == [a.judge_window(t) for t in a.histories()]
        build_site(together, folder / f"full-{n}", full=True)
        assert site_files(folder / "site") == site_files(folder / f"full-{n}")
