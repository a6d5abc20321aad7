"""`build.py report --summary`: a GPU job's summary, under the already-passed note when the job was skipped."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.build_command import build_py
from tests.support.recorded_runs import H200

PASSED = {
    "run": "https://github.com/o/r/actions/runs/7",
    "image": "ghcr.io/o/pytorch-cuda@sha256:" + "e" * 64,
    "content_hash": "sha256:" + "f" * 64,
    "runner": "h200",
    "date": "2026-12-06T01:02:03Z",
}


def test_the_summary_is_the_report_appended(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier\n", encoding="utf-8")
    result = build_py("report", str(H200), "--out", str(tmp_path / "out"), "--summary", str(summary))
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert summary.read_text(encoding="utf-8") == "earlier\n" + report


def test_a_skipped_job_says_which_run_passed_first(tmp_path: Path) -> None:
    passed, summary = tmp_path / "passed.json", tmp_path / "summary.md"
    passed.write_text(json.dumps(PASSED), encoding="utf-8")
    argv = ["report", str(H200), "--out", str(tmp_path / "out"), "--summary", str(summary)]
    result = build_py(*argv, "--already-passed", str(passed))
    assert result.returncode == 0, result.stderr
    text = summary.read_text(encoding="utf-8")
    note, report = text.split("\n\n", 1)
    assert note.startswith("> **Skipped: already passed.**")
    assert f"hash to `{PASSED['content_hash']}`, which passed on `h200` in" in note
    assert f"> {PASSED['run']} ({PASSED['date']}); the results below are that run's." in note
    assert report == (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_a_passed_file_without_its_fields_is_bad_input(tmp_path: Path) -> None:
    passed = tmp_path / "passed.json"
    passed.write_text(json.dumps({"run": PASSED["run"]}), encoding="utf-8")
    argv = ["report", str(H200), "--out", str(tmp_path / "out"), "--summary", str(tmp_path / "s.md")]
    result = build_py(*argv, "--already-passed", str(passed))
    assert result.returncode == 2
    assert "lacks content_hash, runner, date" in result.stderr.replace("\n", " ")
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "s.md").exists()


def test_already_passed_without_a_summary_is_bad_input(tmp_path: Path) -> None:
    result = build_py("report", str(H200), "--out", str(tmp_path / "out"), "--already-passed", "passed.json")
    assert result.returncode == 2
    assert "--already-passed notes a job summary" in result.stderr
