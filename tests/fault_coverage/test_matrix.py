"""The fault x check matrix from results files: gated checks, trips, collateral, misses, controls, coverage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fault_coverage.__main__ import main
from fault_coverage.case_model import Case, Injection, env
from fault_coverage.coverage_matrix import build_matrix
from fault_coverage.coverage_page import render

SUITE = "conformance/test_x.py::"


def _results(runs: Path, case: str, outcomes: dict[str, str], informational: dict[str, str] | None = None) -> None:
    tests = {
        SUITE + name: {
            "outcome": outcome, "phase": "call", "markers": ["gpu"], "duration_s": 0.1,
            "message": f"{name} {outcome}: named reason", "metrics": {}, "notes": [],
            **({"informational": informational[name]} if informational and name in informational else {}),
        }
        for name, outcome in outcomes.items()
    }  # fmt: skip
    document = {
        "schema": 2, "suite": "pytorch-cuda-conformance", "image": {"digest": None, "revision": None, "ref": None},
        "started_at": "2026-12-05T10:00:00+00:00", "wall_time_s": 80.5, "argv": [], "markexpr": "", "exit_status": 0,
        "environment": {"torch": "2.11.0+cu130", "cuda": "13.0", "gpus": [
            {"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "memory_bytes": 1,
             "sm_count": 132, "driver": "580.1", "cuda_driver_version": "13.0", "uuid": None}]},
        "manifest": {"path": "", "origin": "none", "found": False, "error": None, "content": None},
        "totals": {"passed": 0, "failed": 0, "skipped": 0, "not_run": 0, "total": 0},
        "tests": tests, "measurements": {},
    }  # fmt: skip
    runs.mkdir(parents=True, exist_ok=True)
    (runs / f"{case}.json").write_text(json.dumps(document))


CASES = (
    Case("untouched", "control", "nothing", Injection()),
    Case("eager", "control", "eager loading", env(CUDA_MODULE_LOADING="EAGER"), skips=(("test_mem", "ALLOC"),)),
    Case("tf32", "fault", "TF32 forced", env(NVIDIA_TF32_OVERRIDE="1"), trips=("test_gemm",)),
    Case("busy", "fault", "a busy GPU", Injection(busy_gpu=True), trips=("test_speed", "test_gemm[fp16]")),
)
UNTOUCHED = {"test_gemm[fp32]": "passed", "test_gemm[fp16]": "passed", "test_speed": "passed",
             "test_range": "passed", "test_two_gpus": "skipped", "test_mem": "passed"}  # fmt: skip


def test_coverage_counts_gated_checks_tripped_by_the_faults_that_target_them(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _results(runs, "untouched", UNTOUCHED, informational={"test_range": "65536 is exact in bf16"})
    _results(runs, "eager", {**UNTOUCHED, "test_mem": "skipped"})
    _results(runs, "tf32", {"test_gemm[fp32]": "failed", "test_gemm[fp16]": "passed", "test_mem": "failed"})
    _results(runs, "busy", {"test_gemm[fp16]": "passed", "test_speed": "failed"})
    matrix = build_matrix(CASES, runs, "h100")
    assert matrix["coverage"] == {
        "gated": 4,
        "tripped": 2,
        "percent": 50.0,
        "untripped": ["test_gemm[fp16]", "test_mem"],
    }
    assert matrix["checks"]["test_range"]["gated"] is False  # informational: out of the denominator
    skipped: dict[str, object] = {"untouched": "skipped", "reason": "test_two_gpus skipped: named reason",
                                  "informational": None, "gated": False, "tripped_by": []}  # fmt: skip
    assert matrix["checks"]["test_two_gpus"] == skipped
    tf32 = next(c for c in matrix["cases"] if c["name"] == "tf32")
    assert (tf32["tripped"], tf32["collateral"], tf32["missed"]) == (
        ["test_gemm[fp32]"],
        ["test_mem"],
        ["test_gemm[fp16]"],
    )
    assert "fault busy did not trip test_gemm[fp16]" in matrix["findings"]
    assert "control eager lacks the test_mem (skip naming 'ALLOC')" in matrix["findings"]
    assert matrix["grid"]["test_speed"] == {
        "untouched": "passed",
        "eager": "passed",
        "tf32": "absent",
        "busy": "failed",
    }
    page = render(matrix)
    assert "**Fault coverage: 2 of 4 gated checks tripped by a real fault (50.0%).**" in page
    assert "| `test_speed` | yes | `busy` | . | . | - | F |" in page
    assert "| `test_range` | 65536 is exact in bf16 |" in page


def test_a_failing_control_and_a_crashed_fault_are_findings(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _results(runs, "untouched", UNTOUCHED)
    _results(runs, "eager", {**UNTOUCHED, "test_speed": "failed", "test_mem": "skipped"})
    (runs / "tf32.log").write_text("Segmentation fault\n")  # ran, wrote no results file
    findings = build_matrix(CASES, runs, "h200")["findings"]
    assert "control eager failed test_speed" in findings
    assert any(f.startswith("tf32: no results file") for f in findings)
    assert not any(f.startswith("busy") for f in findings)  # not run on this card: no row, no finding


def test_the_cli_exits_2_without_the_untouched_run_and_1_below_full_coverage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["matrix", "--card", "h100", "--out", str(tmp_path)]) == 2
    assert "the untouched control has no readable results" in capsys.readouterr().err
    _results(tmp_path / "runs", "untouched", {"test_cuda_initialises": "passed"})
    assert main(["matrix", "--card", "h100", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "fault coverage on the h100: 0/1 gated checks (0.0%)" in out
    assert json.loads((tmp_path / "matrix.json").read_text())["coverage"]["untripped"] == ["test_cuda_initialises"]
    assert main(["run", "--card", "h100", "--out", str(tmp_path), "no-such-fault"]) == 2


def test_the_untouched_run_must_keep_its_budget_and_bound_every_number(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _results(runs, "untouched", {"test_gemm[fp16]": "passed"})
    path = runs / "untouched.json"
    document = json.loads(path.read_text())
    document["wall_time_s"] = 131.0
    metrics = {"gemm.fp16.tflops": {"value": 700.0, "unit": "TFLOP/s", "bound": 593.0, "bound_kind": "min"},
               "gemm_ms": {"value": 1.5, "unit": "ms", "informational": True},
               "loose": {"value": 3.0, "unit": "x"}, "backend": {"value": "flash", "unit": "backend"}}  # fmt: skip
    document["tests"][SUITE + "test_gemm[fp16]"]["metrics"] = metrics
    path.write_text(json.dumps(document))
    findings = build_matrix(CASES, runs, "h100")["findings"]
    assert "the whole suite took 131 s, over its 120 s budget" in findings
    assert "test_gemm[fp16] records loose with no bound and no informational flag" in findings
    assert not [f for f in findings if "gemm_ms" in f or "backend" in f or "gemm.fp16" in f]
