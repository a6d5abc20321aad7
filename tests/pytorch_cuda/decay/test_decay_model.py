"""The decay model on synthetic histories: a step (confirmed, or cleared by the next run), a slow slide, host noise
that must not be flagged, an outlier, fault runs that never join the history, and nightly digests of one variant."""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda.decay import judge_store
from pytorch_cuda.decay.noise import learn
from pytorch_cuda.decay.watched import BY_METRIC
from tests.support.synthetic_history import night, store_nights, wobble

GEMM = "gemm.fp16.tflops"
HOSTS = ("runner-a", "runner-b", "runner-c")


def _steady(days: range) -> list[dict[str, object]]:
    return [night(d, scale={GEMM: wobble(d)}, host=HOSTS[d % 3]) for d in days]


def _findings(store: Path) -> list[tuple[str, str, str]]:
    (judged,) = judge_store(store_nights(store, []))
    return [(f.metric, f.kind, f.status) for f in judged.findings]


def test_nightly_digests_of_one_variant_are_one_history(tmp_path: Path) -> None:
    runs = store_nights(tmp_path / "s", _steady(range(6)))
    assert len({r.record.subject.key for r in runs}) == 6  # six digests
    (judged,) = judge_store(runs)
    assert judged.key.text == "cu12-runtime on NVIDIA H100 80GB HBM3, driver 580"
    assert len(judged.nightly) == 6
    assert not judged.findings


def test_a_ten_percent_drop_is_a_suspect_then_confirmed_by_the_next_night(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store_nights(store, [*_steady(range(8)), night(8, scale={GEMM: 0.9}, host="runner-a")])
    assert (GEMM, "step", "suspect") in _findings(store)
    store_nights(store, [night(9, scale={GEMM: 0.9}, host="runner-b")])
    (judged,) = judge_store(store_nights(store, []))
    confirmed = [f for f in judged.latest_regressions() if f.metric == GEMM]
    assert confirmed
    assert confirmed[0].status == "confirmed"
    assert len(confirmed[0].machines) == 2  # confirmed on another host
    assert confirmed[0].change < -0.08
    assert "confirmed, 2 run(s)" in confirmed[0].describe()


def test_an_outlier_is_cleared_by_the_next_night(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store_nights(store, [*_steady(range(8)), night(8, scale={GEMM: 0.88}), night(9, scale={GEMM: 1.0})])
    assert (GEMM, "step", "cleared") in _findings(store)
    (judged,) = judge_store(store_nights(store, []))
    assert not judged.latest_regressions()


def test_three_nights_at_minus_four_percent_each_are_flagged(tmp_path: Path) -> None:
    slide = [night(8 + i, scale={GEMM: 0.96 ** (i + 1)}, host=HOSTS[i]) for i in range(3)]
    store = tmp_path / "s"
    runs = store_nights(store, [*_steady(range(8)), *slide[:1]])
    (judged,) = judge_store(runs)
    assert not [f for f in judged.findings if f.metric == GEMM]  # one night at -4%: within noise
    (judged,) = judge_store(store_nights(store, slide[1:]))
    flagged = [f for f in judged.latest_regressions() if f.metric == GEMM]
    assert flagged, [f.describe() for f in judged.findings]


def test_host_to_host_spread_is_noise_not_a_regression(tmp_path: Path) -> None:
    # runner-b is 5% slower than runner-a on every GEMM, night after night, and the order alternates
    nights = [
        night(d, scale={GEMM: 0.95 if d % 2 else 1.0}, host="runner-b" if d % 2 else "runner-a") for d in range(12)
    ]
    (judged,) = judge_store(store_nights(tmp_path / "s", nights))
    assert not [f for f in judged.findings if f.metric == GEMM]
    noise = next(n for n in judged.noise if n.metric == GEMM)
    assert noise.source == "learned"
    assert noise.machines == 2
    assert noise.spread >= 0.02


def test_fault_runs_are_judged_but_never_a_baseline(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store_nights(store, _steady(range(6)))
    store_nights(store, [night(6, scale={GEMM: 0.5})], fault="busy-gpu")
    runs = store_nights(store, [night(7, scale={GEMM: 1.0})])
    (judged,) = judge_store(runs)
    fault = [f for f in judged.findings if f.run.record.fault == "busy-gpu"]
    assert [(f.metric, f.status) for f in fault] == [(GEMM, "fault")]
    assert judged.runs[-2].purpose == "fault"
    assert judged.runs[-1].purpose == "nightly"
    assert not judged.on(judged.runs[-1])  # night 7 is judged against the clean nights, not the fault run
    noise = next(n for n in judged.noise if n.metric == GEMM)
    assert noise.runs == 7  # six steady nights and night 7; the fault run is not among them


def test_a_run_is_never_judged_against_itself(tmp_path: Path) -> None:
    store = tmp_path / "s"
    (judged,) = judge_store(store_nights(store, [night(0, scale={GEMM: 0.5})]))
    assert not judged.findings  # nothing before it: nothing to compare with, and never itself


def test_the_noise_model_is_robust_to_one_outlier() -> None:
    watched = BY_METRIC[GEMM]
    values = [700.0, 705.0, 698.0, 702.0, 701.0, 350.0, 699.0]
    noise = learn(watched, values, ["a", "b"] * 3 + ["a"])
    assert noise is not None
    assert noise.source == "learned"
    assert 699 <= noise.centre <= 701
    assert noise.spread == watched.least_noise
    few = learn(watched, values[:2], ["a", "a"])
    assert few is not None
    assert few.source == "prior"
    assert few.spread == 2 * watched.least_noise
