"""Round two's verdicts: a held step open every night until accepted (and the noise unharmed), a -5% held step and
a -4%/night slide flagged by night 3, an outlier, a hidden metric, a new GPU, the committed runs replayed night by
night (nothing confirmed), and the committed CUBLAS_WORKSPACE_CONFIG=:0:0 run ingested as a nightly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.decay import judge_store
from pytorch_cuda.decay.accepting import accept_open
from pytorch_cuda.run_store import StoreError, ingest, read_store
from pytorch_cuda.run_store.accepted import read_accepted
from tests.support.recorded_runs import ROOT
from tests.support.synthetic_history import night, store_nights, wobble

BF16 = "gemm.bf16.tflops"
TF32 = "gemm.tf32.tflops"
HOSTS = ("runner-a", "runner-b", "runner-c")
UNTOUCHED = sorted((ROOT / "evidence/fleet-runs").glob("*/*.json"))


def _steady(days: range, metric: str = BF16) -> list[dict[str, Any]]:
    return [night(d, scale={metric: wobble(d)}, host=HOSTS[d % 3]) for d in days]


def _latest(store: Path, metric: str) -> list[str]:
    (judged,) = judge_store(read_store(store), read_accepted(store))
    return [f"{f.kind} {f.status}" for f in judged.latest_regressions() if f.metric == metric]


def test_a_held_step_stays_open_every_night_until_accepted_and_never_widens_the_noise(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store_nights(store, _steady(range(10)))
    (before,) = judge_store(read_store(store))
    noise_before = next(n for n in before.noise if n.metric == BF16)
    for held in range(9):
        day = 10 + held
        store_nights(store, [night(day, scale={BF16: 0.9 * wobble(day)}, host=HOSTS[day % 3])])
        assert _latest(store, BF16) == ([] if held == 0 else ["step confirmed"]), f"night {held + 1}"
    (after,) = judge_store(read_store(store))
    noise_after = next(n for n in after.noise if n.metric == BF16)
    assert (noise_after.centre, noise_after.spread) == (noise_before.centre, noise_before.spread)
    accepted = accept_open(store, BF16, "cuBLAS picks another kernel; accepted in #1", history="H100")
    assert [a.metric for a in accepted] == [BF16]
    assert json.loads((store / "index.json").read_text())["accepted"][0]["metric"] == BF16
    store_nights(store, [night(19, scale={BF16: 0.9 * wobble(19)}, host="runner-b")])
    assert _latest(store, BF16) == []  # the accepted level is the new centre
    (judged,) = judge_store(read_store(store), read_accepted(store))
    assert next(n for n in judged.noise if n.metric == BF16).spread == noise_before.spread


def test_a_regression_is_accepted_only_with_a_reason_and_only_when_open(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store_nights(store, _steady(range(6)))
    with pytest.raises(StoreError, match=r"no regression of gemm\.bf16\.tflops is open"):
        accept_open(store, BF16, "why not")
    with pytest.raises(StoreError, match="was given no reason"):
        accept_open(store, BF16, "  ")


def test_a_held_five_percent_step_is_flagged_by_night_three_where_the_limit_is_five_percent(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store_nights(store, _steady(range(10), TF32))
    (judged,) = judge_store(read_store(store))
    assert next(n for n in judged.noise if n.metric == TF32).detectable <= 0.05
    for held in range(3):
        day = 10 + held
        store_nights(store, [night(day, scale={TF32: 0.95 * wobble(day)}, host=HOSTS[day % 3])])
    assert _latest(store, TF32)  # a step or a drift, confirmed


def test_a_slide_of_four_percent_a_night_is_flagged_by_night_three(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store_nights(store, _steady(range(10)))
    store_nights(store, [night(10 + i, scale={BF16: 0.96 ** (i + 1)}, host=HOSTS[i]) for i in range(2)])
    assert _latest(store, BF16) == []
    store_nights(store, [night(12, scale={BF16: 0.96**3}, host="runner-c")])
    assert _latest(store, BF16)


def test_a_one_night_outlier_is_cleared(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store_nights(store, [*_steady(range(8)), night(8, scale={BF16: 0.88}), night(9, scale={BF16: 1.0})])
    (judged,) = judge_store(read_store(store))
    assert [(f.metric, f.status) for f in judged.findings] == [(BF16, "cleared")]
    assert not judged.latest_regressions()


def test_a_metric_that_stops_being_reported_is_flagged(tmp_path: Path) -> None:
    store = tmp_path / "s"
    hidden = []
    for day in (8, 9):
        document = night(day)
        del document["measurements"][BF16]
        hidden.append(document)
    store_nights(store, [*_steady(range(8)), hidden[0]])
    assert _latest(store, BF16) == []
    (judged,) = judge_store(read_store(store))
    assert [(f.kind, f.status) for f in judged.on(judged.nightly[-1])] == [("missing", "suspect")]
    store_nights(store, [hidden[1]])
    assert _latest(store, BF16) == ["missing confirmed"]


def test_a_new_gpu_says_no_history_yet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s"
    document = night(0, scale={BF16: 0.5})
    document["environment"]["gpus"][0]["name"] = "NVIDIA B200"
    store_nights(store, [*_steady(range(6)), document])
    assert main(["results", "judge", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "cu12-runtime on NVIDIA B200, driver 580: 1 nightly" in out
    assert "latest nightly run: no history yet (1 of 5 runs): nothing is judged until then" in out
    assert "latest nightly run: 0 open regression(s)" in out  # the H100 history


def test_replaying_every_committed_untouched_run_confirms_nothing(tmp_path: Path) -> None:
    ingest(UNTOUCHED, tmp_path / "s")
    runs = read_store(tmp_path / "s")
    assert len(runs) == len(UNTOUCHED) >= 19
    for n in range(1, len(runs) + 1):
        for judged in judge_store(runs[:n]):
            assert not judged.latest_regressions(), [f.describe() for f in judged.latest_regressions()]


def test_the_committed_cublas_workspace_run_ingested_as_a_nightly_is_a_confirmed_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fault = ROOT / "evidence/decay-faults/h100/cublas-workspace-0.json"
    before = [p for p in UNTOUCHED if "/h100/" in str(p) and p.name < "2026-12-06T01-58Z.json"]
    ingest([*before, fault], tmp_path / "s")
    assert main(["results", "judge", "--store", str(tmp_path / "s")]) == 1
    out = capsys.readouterr().out
    assert "[partial]" in out  # a failed check: judged on its numbers, and marked
    (judged,) = judge_store(read_store(tmp_path / "s"))
    assert {f.metric for f in judged.latest_regressions()} == {TF32, "gemm.tf32.x_fp32"}
    assert "latest nightly run (partial: judged on the numbers it has): 2 open regression(s)" in out


def test_report_diff_gives_the_judges_verdict_and_no_machine_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fault = ROOT / "evidence/decay-faults/h100/cublas-workspace-0.json"
    before = [p for p in UNTOUCHED if "/h100/" in str(p) and p.name < "2026-12-06T01-58Z.json"]
    store = tmp_path / "s"
    ingest(before, store)
    assert main(["report", "--diff", str(fault), "--baseline-store", str(store), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert sorted(result["history_regressions"]) == [TF32, "gemm.tf32.x_fp32"]
    assert "2 regression(s), 0 suspect" in result["markdown"]
    assert str(tmp_path) not in result["markdown"]
    assert str(ROOT) not in result["markdown"]
    assert len(read_store(store)) == len(before)  # the diff judged a copy: the store is not written
    ingest([fault], store)
    assert main(["results", "judge", "--store", str(store), "--json"]) == 1
    (history,) = json.loads(capsys.readouterr().out)["histories"]
    assert sorted(f["metric"] for f in history["latest_confirmed"]) == [TF32, "gemm.tf32.x_fp32"]
