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
        "real_tripped": 2,
        "real_percent": 50.0,
        "real_untripped": ["test_gemm[fp16]", "test_mem"],
        "by_kind": {"environment": 2, "setting": 0, "library patch": 0, "replaced value": 0},
    }
    assert matrix["checks"]["test_range"]["gated"] is False  # informational: out of the denominator
    skipped: dict[str, object] = {"untouched": "skipped", "reason": "test_two_gpus skipped: named reason",
                                  "informational": None, "gated": False, "tripped_by": [],
                                  "tripped_by_real": []}  # fmt: skip
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
    assert "**Fault coverage: 2 of 4 gated checks tripped by a fault (50.0%); by a real fault" in page
    assert "| `test_speed` | yes | `busy` | `busy` | . | . | - | F |" in page
    assert "| `test_range` | 65536 is exact in bf16 |" in page


def test_a_failing_control_and_a_crashed_fault_are_findings(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _results(runs, "untouched", UNTOUCHED)
    _results(runs, "eager", {**UNTOUCHED, "test_speed": "failed", "test_mem": "skipped"})
    (runs / "tf32.log").write_text("Segmentation fault\n")  # ran, wrote no results file
    matrix = build_matrix(CASES, runs, "h200")
    findings = matrix["findings"]
    assert "control eager failed test_speed" in findings
    assert any(f.startswith("tf32: no results file") for f in findings)
    assert not any(f.startswith("busy") for f in findings)  # not run on this card: no row, no finding
    assert matrix["not_run"] == ["busy"]  # but the matrix says it lacks it
    assert "**Partial: 1 cases of the catalogue have no run on this card**" in render(matrix)
    assert "Partial" not in render({**matrix, "not_run": []})


def test_the_cli_exits_1_on_a_partial_matrix_and_names_the_cases_without_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    _results(runs, "untouched", {"test_cuda_initialises": "passed"})
    _results(runs, "no-device", {"test_cuda_initialises": "failed"})  # a fault's run: not in the list
    assert main(["matrix", "--card", "h200", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    partial = next(line for line in out.splitlines() if line.startswith("partial: "))
    assert " no-device" not in partial
    assert " busy-gpu" in partial
    assert "untouched" not in json.loads((tmp_path / "matrix.json").read_text())["not_run"]


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


KINDS = (
    *CASES[:2],
    Case("tf32", "fault", "TF32 forced", env(NVIDIA_TF32_OVERRIDE="1"), trips=("test_gemm[fp32]",)),
    Case("wrong-mem", "fault", "a patched allocator", Injection(patch="p"), trips=("test_mem",)),
    Case("old-pin", "fault", "pins drifted", Injection(expectations={"pins.torch": "1"}), trips=("test_speed",)),
    Case("sockets", "fault", "NCCL on sockets", env(NCCL_P2P_DISABLE="1"), trips=("test_two_gpus",),
         gap="one GPU cannot test it"),
    Case("silent", "fault", "a fault whose target is not gated", env(X="1"), trips=("test_two_gpus",)),
)  # fmt: skip


def test_coverage_by_real_faults_counts_environment_and_settings_apart(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _results(runs, "untouched", UNTOUCHED)
    _results(runs, "tf32", {"test_gemm[fp32]": "failed"})
    _results(runs, "wrong-mem", {"test_mem": "failed"})
    _results(runs, "old-pin", {"test_speed": "failed"})
    _results(runs, "sockets", {"test_two_gpus": "skipped"})
    _results(runs, "silent", {"test_two_gpus": "skipped"})
    matrix = build_matrix(KINDS, runs, "h100")
    coverage = matrix["coverage"]
    assert (coverage["tripped"], coverage["real_tripped"]) == (3, 1)
    assert coverage["by_kind"] == {"environment": 1, "setting": 0, "library patch": 1, "replaced value": 1}
    assert matrix["checks"]["test_mem"]["tripped_by"] == ["wrong-mem"]
    assert matrix["checks"]["test_mem"]["tripped_by_real"] == []
    assert matrix["gaps"] == [{"fault": "sockets", "reason": "one GPU cannot test it"}]
    assert "fault silent tripped nothing: none of its targets is gated here (test_two_gpus)" in matrix["findings"]
    assert not any("sockets" in f for f in matrix["findings"])
    page = render(matrix)
    assert "by a real fault (the environment or a setting, as a host can have it): 1 of 5 (20.0%)" in page
    assert "- `sockets`: one GPU cannot test it" in page
    assert "| 2 | `wrong-mem` | library patch |" in page
    assert "Tripped only by a library patch or a replaced value: `test_speed`, `test_mem`." in page


def test_a_control_timed_run_and_its_other_run_read_as_one(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _results(runs, "untouched", UNTOUCHED)
    _results(runs, "eager", {"test_gemm[fp32]": "passed", "test_mem": "skipped"})
    _results(runs, "eager.timed", {"test_speed": "failed"})
    (runs / "cases-controls.json").write_text(json.dumps([{"name": "eager", "wall_s": 40.0},
                                                          {"name": "eager.timed", "wall_s": 30.5}]))  # fmt: skip
    matrix = build_matrix(CASES, runs, "h100")
    eager = next(c for c in matrix["cases"] if c["name"] == "eager")
    assert eager["failed"] == ["test_speed"]
    assert eager["wall_s"] == 70.5
    assert "control eager failed test_speed" in matrix["findings"]


def test_a_check_deselected_in_a_control_timed_run_keeps_its_outcome_from_the_other_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _results(runs, "untouched", UNTOUCHED)
    _results(runs, "eager", {"test_gemm[fp32]": "passed", "test_mem": "skipped", "test_speed": "not_run"})
    _results(runs, "eager.timed", {"test_speed": "passed", "test_mem": "not_run", "test_gemm[fp32]": "not_run"})
    (runs / "eager.json").write_text((runs / "eager.json").read_text().replace("test_mem skipped", "ALLOC off"))
    matrix = build_matrix(CASES, runs, "h100")
    eager = next(c for c in matrix["cases"] if c["name"] == "eager")
    assert eager["missing_skips"] == []
    assert not any("eager" in f for f in matrix["findings"])


def test_a_part_runs_its_cases_and_waits_for_the_untouched_run_to_write_the_matrix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[tuple[list[str], str]] = []

    def fake_run_cases(cases: list[Case], root: Path, out: Path, **options: str) -> list[object]:
        ran.append(([c.name for c in cases], options["index_name"]))
        (out / "runs").mkdir(parents=True, exist_ok=True)
        return []

    monkeypatch.setattr("fault_coverage.__main__.run_cases", fake_run_cases)
    assert main(["run", "--card", "h100", "--out", str(tmp_path), "--part", "faults"]) == 0
    names, index = ran[-1]
    assert "untouched" not in names
    assert "cudnn-off" in names
    assert "any-uid" not in names
    assert index == "cases-faults.json"
    assert "no untouched run" in capsys.readouterr().out
    assert main(["run", "--card", "h100", "--out", str(tmp_path), "--part", "controls"]) == 0
    assert ran[-1][0][0] == "untouched"
    assert "deterministic-algorithms" in ran[-1][0]
    assert main(["run", "--card", "h100", "--out", str(tmp_path), "--part", "controls", "expandable-segments"]) == 0
    assert ran[-1] == (["expandable-segments"], "cases-expandable-segments.json")


def test_suite_versions_name_the_cases_judged_by_an_older_suite() -> None:
    from fault_coverage.coverage_matrix import suite_versions

    versions = suite_versions({
        "untouched": [("2026-12-06T04:40", "sha256:old")],
        "cudnn-off": [("2026-12-06T04:50", "sha256:old")],
        "fp16-accumulation-allowed": [("2026-12-06T09:00", "sha256:new")],
    })  # fmt: skip
    assert versions["latest"] == "sha256:new"
    assert versions["older"] == ["untouched", "cudnn-off"]
    assert versions["by_digest"] == {
        "sha256:old": ["untouched", "cudnn-off"],
        "sha256:new": ["fp16-accumulation-allowed"],
    }


def test_a_check_tripped_only_where_the_host_has_a_condition_counts_there_and_is_no_finding_elsewhere(
    tmp_path: Path,
) -> None:
    older = ("test_speed", "the host's library is older")
    cases = (CASES[0], Case("host-lib", "fault", "the host's library first", env(LD_PRELOAD="x"),
                            trips=("test_mem",), trips_where=(older,)))  # fmt: skip
    where_older, where_newer = tmp_path / "older" / "runs", tmp_path / "newer" / "runs"
    for runs, speed in ((where_older, "failed"), (where_newer, "passed")):
        _results(runs, "untouched", UNTOUCHED)
        _results(runs, "host-lib", {"test_mem": "failed", "test_speed": speed})
    tripped = build_matrix(cases, where_older, "h100")
    entry = next(c for c in tripped["cases"] if c["name"] == "host-lib")
    assert entry["tripped"] == ["test_mem", "test_speed"]
    assert tripped["checks"]["test_speed"]["tripped_by"] == ["host-lib"]
    passed = build_matrix(cases, where_newer, "h100")
    assert passed["checks"]["test_speed"]["tripped_by"] == []
    assert not any("host-lib" in finding for finding in passed["findings"])
    assert (
        "test_speed (where the host's library is older)"
        in next(c for c in passed["cases"] if c["name"] == "host-lib")["targets"]
    )
    always = Case("host-lib", "fault", "", env(LD_PRELOAD="x"), trips=("test_mem", "test_speed"))
    must = build_matrix((CASES[0], always), where_newer, "h100")
    assert "fault host-lib did not trip test_speed" in must["findings"]
