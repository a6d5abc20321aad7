"""README's chart (evidence/reports/h200/amp.svg) is the committed report's AMP chart, as chart_file writes it."""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda.precision_report.chart_file import main

REPORT = Path(__file__).resolve().parents[3] / "evidence/reports/h200"


def test_the_committed_chart_is_the_report_s(tmp_path: Path) -> None:
    assert main([str(REPORT / "report.json"), "amp", str(tmp_path / "amp.svg")]) == 0
    written = (tmp_path / "amp.svg").read_text(encoding="utf-8")
    assert "AMP training step" in written
    assert written == (REPORT / "amp.svg").read_text(encoding="utf-8"), "run scripts/report-h200.sh"


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    assert main([str(REPORT / "report.json"), "pie", str(tmp_path / "x.svg")]) == 2
    assert not (tmp_path / "x.svg").exists()
