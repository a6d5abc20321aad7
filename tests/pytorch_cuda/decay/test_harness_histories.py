"""The timing harness keys the history: the first nights of a new harness (every number moved) start a history of
their own within the key, "no history yet" until it has enough runs, and are never read as a step against the runs
of the harness before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.decay import judge_store
from pytorch_cuda.decay.limits import HISTORY_RUNS
from pytorch_cuda.run_store import read_store
from pytorch_cuda_contract.results_format import HARNESS_VERSION
from tests.support.synthetic_history import night, store_nights, wobble

GEMM = ("gemm.fp16.tflops", "gemm.bf16.tflops", "gemm.tf32.tflops", "gemm.fp32.tflops")
HOSTS = ("runner-a", "runner-b", "runner-c")


def _night(day: int, level: float, harness: int | None) -> dict[str, Any]:
    """Every GEMM at ``level`` x the recorded run (with a +-1% wobble), timed by ``harness`` (None: a file written
    before the field, harness 1)."""
    document = night(day, scale={m: level * wobble(day) for m in GEMM}, host=HOSTS[day % 3])
    if harness is not None:
        document["harness"] = harness
    return document


def _old_then_new(days_new: int, harness: int | None = HARNESS_VERSION) -> list[dict[str, Any]]:
    """Eight nights of the old harness, then ``days_new`` nights of ``harness`` whose GEMMs read 10% lower (a
    harness that flushes the L2 moves the numbers; here by as much as a real regression)."""
    old = [_night(d, 1.0, None) for d in range(8)]
    return old + [_night(8 + d, 0.9, harness) for d in range(days_new)]


def test_the_first_night_of_a_new_harness_is_no_step_but_a_new_history(tmp_path: Path) -> None:
    (judged,) = judge_store(store_nights(tmp_path / "s", _old_then_new(2)))
    assert judged.harness == HARNESS_VERSION
    assert len(judged.nightly) == 10
    assert len(judged.current) == 2
    assert judged.earlier_harness == 8
    assert not [f for f in judged.findings if f.run in judged.current]
    assert not judged.latest_regressions()
    assert judged.no_history == f"no history yet (2 of {HISTORY_RUNS + 1} runs of timing harness {HARNESS_VERSION})"
    assert {n.runs for n in judged.noise} == {2}  # from the new harness's runs only, not the old harness's


def test_without_the_harness_key_the_same_nights_are_a_confirmed_step(tmp_path: Path) -> None:
    # the runs unmarked (all read as harness 1): the move is judged as a regression, which is what the key prevents
    (judged,) = judge_store(store_nights(tmp_path / "s", _old_then_new(2, harness=None)))
    assert judged.harness == 1
    confirmed = {f.metric for f in judged.latest_regressions()}
    assert set(GEMM) <= confirmed


def test_the_new_harness_learns_its_own_noise_and_judges_its_own_steps(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store_nights(store, _old_then_new(HISTORY_RUNS + 2))
    (judged,) = judge_store(read_store(store))
    assert judged.no_history is None
    assert not judged.findings
    noise = next(n for n in judged.noise if n.metric == "gemm.bf16.tflops")
    assert noise.runs == HISTORY_RUNS + 2  # the new harness's runs only
    old_centre = json.loads(json.dumps(night(0)))["measurements"]["gemm.bf16.tflops"]["value"]
    assert noise.centre == pytest.approx(0.9 * old_centre, rel=0.02)
    # a real -10% step under the new harness is judged against the new harness's level
    store_nights(store, [_night(30, 0.81, HARNESS_VERSION), _night(31, 0.81, HARNESS_VERSION)])
    (judged,) = judge_store(read_store(store))
    assert "gemm.bf16.tflops" in {f.metric for f in judged.latest_regressions()}


def test_the_runs_of_the_earlier_harness_stay_judged_among_themselves(tmp_path: Path) -> None:
    old = [_night(d, 1.0, None) for d in range(8)] + [_night(8, 0.8, None), _night(9, 0.8, None)]
    new = [_night(10 + d, 0.9, HARNESS_VERSION) for d in range(2)]
    (judged,) = judge_store(store_nights(tmp_path / "s", old + new))
    old_runs = judged.nightly[: len(old)]
    confirmed_before = {f.metric for f in judged.findings if f.run is old_runs[-1] and f.status == "confirmed"}
    assert set(GEMM) <= confirmed_before  # the old harness's own -20% step, still in its history
    assert not judged.latest_regressions()  # not carried into the new harness's history


def test_results_judge_says_which_harness_it_judges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s"
    store_nights(store, _old_then_new(2))
    assert main(["results", "judge", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert f"timing harness {HARNESS_VERSION}: judged against its own 2 nightly run(s); the 8 run(s)" in out
    assert f"latest nightly run: no history yet (2 of {HISTORY_RUNS + 1} runs of timing harness" in out
    assert main(["results", "judge", "--store", str(store), "--json"]) == 0
    (history,) = json.loads(capsys.readouterr().out)["histories"]
    assert (history["harness"], history["earlier_harness_runs"]) == (HARNESS_VERSION, 8)
