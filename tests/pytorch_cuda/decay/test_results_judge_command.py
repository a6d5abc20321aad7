"""`build.py results judge` on a real store: the learned noise, a confirmed drop (exit 1), a control stored apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda.cli.main import main
from tests.support.synthetic_history import night, store_nights, wobble

GEMM = "gemm.bf16.tflops"


def test_judge_prints_the_noise_and_exits_1_on_a_confirmed_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    store_nights(store, [night(d, scale={GEMM: wobble(d)}, host=("a", "b", "c")[d % 3]) for d in range(6)])
    assert main(["results", "judge", "--store", str(store), "--noise"]) == 0
    out = capsys.readouterr().out
    assert "cu12-runtime on NVIDIA H100 80GB HBM3, driver 580: 6 nightly" in out
    assert f"noise {GEMM}: " in out
    assert "learned from 6 runs on 3 hosts" in out
    store_nights(store, [night(6 + d, scale={GEMM: 0.85}, host=("a", "b")[d]) for d in range(2)])
    assert main(["results", "judge", "--store", str(store), "--json"]) == 1
    (history,) = json.loads(capsys.readouterr().out)["histories"]
    (confirmed,) = [f for f in history["latest_confirmed"] if f["metric"] == GEMM]
    assert confirmed["status"] == "confirmed"
    assert len(confirmed["hosts"]) == 2


def test_a_control_is_stored_apart_and_fault_and_control_together_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    store_nights(store, [night(d) for d in range(4)])
    control = tmp_path / "allocator.json"
    control.write_text(json.dumps(night(5, scale={GEMM: 0.97})))
    argv = ["results", "ingest", str(control), "--store", str(store)]
    assert main([*argv, "--control", "expandable-segments", "--fault", "x"]) == 2
    assert "a run is either under a fault or" in capsys.readouterr().err
    assert main([*argv, "--control", "expandable-segments"]) == 0
    capsys.readouterr()
    assert main(["results", "list", "--store", str(store), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["runs"]
    assert [r["purpose"] for r in rows] == ["nightly"] * 4 + ["control"]
    assert rows[-1]["control"] == "expandable-segments"
