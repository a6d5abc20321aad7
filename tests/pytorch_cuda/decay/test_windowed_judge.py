"""The judge reads a window of each history (the last runs plus the open regressions) and keeps the full read's
verdicts: histories longer than the window, one with a regression opened long before it, on the folder and SQLite
(PostgreSQL: tests/pytorch_cuda/run_store/test_postgres_store.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pytorch_cuda.decay.judge import judge_history, order
from pytorch_cuda.decay.report import judged_document
from pytorch_cuda.decay.windowed import MOVE_SHARE, SHOWN_RUNS, WindowedJudged, judge_windowed, moves_after
from pytorch_cuda.run_store import ingest
from pytorch_cuda.run_store.backend import open_store
from tests.support.long_histories import (
    DROP_FROM,
    GEMM,
    NIGHTS,
    WINDOW,
    batches_of,
    full_read,
    long_nights,
    store_and_judge,
    verdicts,
)
from tests.support.synthetic_history import night, wobble


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> list[list[Path]]:
    return long_nights(tmp_path_factory.mktemp("nights"))


@pytest.fixture(scope="module")
def judged(
    tmp_path_factory: pytest.TempPathFactory, nights: list[list[Path]]
) -> dict[str, tuple[Path, list[list[WindowedJudged]]]]:
    """The nights stored in batches into a folder and a SQLite file, each batch judged on its windows."""
    done = {}
    for name in ("store", "store.sqlite"):
        store = tmp_path_factory.mktemp("stores") / name
        done[name] = (store, store_and_judge(store, batches_of(nights)))
    return done


@pytest.mark.parametrize("name", ["store", "store.sqlite"])
def test_the_window_judges_as_the_full_read(
    judged: dict[str, tuple[Path, list[list[WindowedJudged]]]], name: str
) -> None:
    store, batches = judged[name]
    read = full_read(store)  # the store changes no more: one full read serves both comparisons
    assert verdicts([w.judged for w in batches[-1]]) == verdicts(read)
    steady, dropping = sorted(batches[-1], key=lambda w: w.judged.key.variant, reverse=True)
    assert "steady" in steady.judged.key.variant
    # the drop opened on night DROP_FROM + 1, long before the last one: still open, and read
    (opened,) = [f for f in dropping.judged.latest_regressions() if f.metric == GEMM]
    assert opened.evidence[0].results.started_at == "2026-01-09T03:00:00+00:00"  # night DROP_FROM
    assert len(dropping.judged.runs) >= NIGHTS - DROP_FROM
    # the steady history is read from its window only, once a window was kept (after the first batch)
    assert [w.read_from is None for w in (batches[0][1], batches[1][1], batches[2][1])] == [True, False, False]
    assert len(steady.judged.runs) <= 2 * WINDOW + SHOWN_RUNS  # the tail, the runs kept exact after it, a batch
    assert steady.exact_after is not None  # ... and the last SHOWN_RUNS runs are past T: judged exactly (the site)
    assert all(order(r) > steady.exact_after for r in steady.judged.runs[-SHOWN_RUNS:])
    full = {j.key: j for j in read}
    kept = full[steady.judged.key]
    assert steady.exact_after is not None
    after = [f for f in kept.findings if (f.run.results.started_at or "", f.run.record.sha256) > steady.exact_after]
    assert [(f.run.record.sha256, f.metric, f.status) for f in steady.judged.findings] == [
        (f.run.record.sha256, f.metric, f.status) for f in after
    ]
    assert len(steady.judged.runs) < len(kept.runs)


def test_the_folder_and_sqlite_give_one_judgement(judged: dict[str, tuple[Path, list[list[WindowedJudged]]]]) -> None:
    documents = [[judged_document([w.judged for w in batch]) for batch in batches] for _, batches in judged.values()]
    assert documents[0] == documents[1]


def test_a_run_stored_late_before_the_window_is_read_in_full(tmp_path: Path, nights: list[list[Path]]) -> None:
    store = tmp_path / "store.sqlite"
    store_and_judge(store, batches_of(nights)[:1])
    before = [w for w in judge_windowed(open_store(store), WINDOW) if "steady" in w.judged.key.variant]
    assert [w.read_from is None for w in before] == [False]  # a window was kept
    late = night(3, host="c", variant="steady")
    late["started_at"] = datetime(2026, 1, 4, 5, tzinfo=UTC).isoformat()  # among the first nights
    (tmp_path / "late.json").write_text(json.dumps(late), encoding="utf-8")
    ingest([tmp_path / "late.json"], store)
    steady = [w for w in judge_windowed(open_store(store), WINDOW) if "steady" in w.judged.key.variant]
    assert [w.read_from for w in steady] == [None]  # the kept window no longer matches: the whole history
    assert verdicts([w.judged for w in judge_windowed(open_store(store), WINDOW)]) == verdicts(full_read(store))


def test_one_pass_gives_the_resume_point_judging_the_first_runs_alone_ends_in(tmp_path: Path) -> None:
    """judge_history's ``resume_after``: the state a read of the runs through that one alone ends in, from the same
    pass (what moving the window compares; windowed.py), at every cut: before and during the open drop, and across
    a change of the timing harness (each harness is judged on its own)."""
    paths = []
    for day in range(70):
        for variant, drop in (("steady", 1.0), ("dropping", 0.85 if day >= DROP_FROM else 1.0)):
            document = night(day, scale={GEMM: wobble(day) * drop}, host="ab"[day % 2], variant=variant)
            document["harness"] = 2 if day >= 50 else 1
            paths.append(tmp_path / "nights" / f"{day:04d}-{variant}.json")
            paths[-1].parent.mkdir(exist_ok=True)
            paths[-1].write_text(json.dumps(document), encoding="utf-8")
    ingest(paths, tmp_path / "store")
    store = open_store(tmp_path / "store")
    for text in store.histories():
        runs = store.history(text)
        for cut in (1, DROP_FROM, DROP_FROM + 3, 49, 50, 51, 60, len(runs)):
            one_pass = judge_history(runs, [], order(runs[cut - 1])).resume_at
            assert one_pass == judge_history(runs[:cut], []).resume_point, (text, cut)
        assert judge_history(runs, []).resume_at is None


def test_the_window_moves_once_the_read_passes_its_tail_the_shown_runs_and_a_third_of_the_tail(
    tmp_path: Path, nights: list[list[Path]]
) -> None:
    """A read of moves_after runs keeps no window; one run more moves it: S to the first of the ``tail`` runs before
    the last SHOWN_RUNS, so the next night reads tail + SHOWN_RUNS + 1 runs (a steady history: nothing open). A
    tail of 36 runs: 68 runs read keep none (twice the tail, what moved it once, would be 72)."""
    tail = 36
    longest = moves_after(tail, SHOWN_RUNS)
    assert longest == tail + SHOWN_RUNS + tail // MOVE_SHARE == 68
    store = tmp_path / "store.sqlite"
    ingest([p for n in nights[:longest] for p in n], store)
    steady = next(t for t in open_store(store).histories() if "steady" in t)
    judge_windowed(open_store(store), tail)
    assert open_store(store).judge_window(steady) is None  # the whole history read: moves_after runs keep none
    ingest(nights[longest], store)
    judge_windowed(open_store(store), tail)
    kept = json.loads(open_store(store).judge_window(steady) or "{}")
    runs = open_store(store).history(steady)
    cut = len(runs) - SHOWN_RUNS - 1
    assert [kept["since"], kept["through"]] == [list(order(runs[cut - tail + 1])), list(order(runs[cut]))]
    ingest(nights[longest + 1], store)
    (after,) = [w for w in judge_windowed(open_store(store), tail) if w.judged.key.text == steady]
    assert len(after.judged.runs) == tail + SHOWN_RUNS + 1
