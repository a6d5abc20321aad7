"""`build.py report` renders a precision-check report (precision-check ... --json) as its own HTML page.

The page shows the lines precision-check judged and wrote into the report (version 5); the recorded runs are older,
so each test first upgrades its run with precision-check's own `python -m precision_check.upgrade`, as a user
would in the image."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from pytorch_cuda.precision_report.report_files import ReportInputError, write_report
from tests.support.build_command import build_py
from tests.support.precision_measurements import RECORDED, upgraded
from tests.support.recorded_runs import H200

TRANSFORMER = RECORDED / "transformer.h200.json"
OVERFLOW = RECORDED / "overflow_mlp.h200.json"


def _page(tmp_path: Path, source: Path) -> str:
    (written,) = write_report([upgraded(tmp_path, source)], tmp_path)
    assert written.name == f"precision-check-{source.stem}.html"
    return written.read_text()


def test_h200_transformer_page_has_the_verdict_the_table_and_the_curves(tmp_path: Path) -> None:
    page = _page(tmp_path, TRANSFORMER)
    doc = json.loads(TRANSFORMER.read_text())
    assert html.escape(doc["verdict"]["headline"]) in page
    for reason in doc["verdict"]["reasons"]:
        assert html.escape(reason) in page
    for dtype, cells in (("fp32", ("104.29", "1.00x", "5733", "+0%")), ("bf16", ("17.46", "5.97x", "3722", "+35%"))):
        row = page[page.index(f"<tr><td>{dtype}</td>") :].split("</tr>", 1)[0]
        assert all(f'<td class="num">{cell}</td>' in row for cell in cells), row
    assert page.count("<tr>") == 1 + 4  # header and fp32, tf32, fp16, bf16
    assert page.count("<svg") == 1
    assert "fp32 noise floor: 0.3% at most along the way" in page
    assert "GradScaler: scale 65536 -&gt; 65536, 0 step(s) skipped" in page
    assert "NVIDIA H200 (compute capability 9.0)" in page


def test_overflow_page_names_the_layer(tmp_path: Path) -> None:
    page = _page(tmp_path, OVERFLOW)
    assert "fp16 overflows in `expand` at step 0 (|x| = inf/nan &gt; 65504): use bf16" in page
    assert "fp32: `expand` left fp16&#39;s range at step 0" in page


def test_conformance_results_and_check_reports_together(tmp_path: Path) -> None:
    transformer = upgraded(tmp_path, TRANSFORMER)
    other = tmp_path / "in" / "transformer.h200.json"
    other.parent.mkdir()
    other.write_text(transformer.read_text())
    written = write_report([H200, transformer, other], tmp_path / "out")
    assert [p.name for p in written] == [
        "report.json",
        "report.md",
        "report.html",
        "precision-check-transformer.h200.html",
        "precision-check-transformer.h200-2.html",
    ]
    assert "precision-check" not in json.loads((tmp_path / "out" / "report.json").read_text())["sources"][0]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda d: d.update(version=99), "not a pytorch-cuda/precision-check document of version 1 or 2"),
        (lambda d: d.pop("verdict"), "missing field 'verdict'"),
        (lambda d: d["runs"]["fp32"].pop("losses"), "missing field 'losses'"),
    ],
)
def test_a_malformed_check_report_is_refused_before_anything_is_written(
    tmp_path: Path, change: object, needle: str
) -> None:
    doc = json.loads(upgraded(tmp_path, TRANSFORMER).read_text())
    change(doc)  # type: ignore[operator]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ReportInputError) as raised:
        write_report([H200, bad], tmp_path / "out")
    assert needle in raised.value.cause
    assert f"{bad} is a pytorch-cuda/precision-check report that cannot be read" in raised.value.cause
    assert not (tmp_path / "out").exists()


def test_cli_exit_2_and_one_paragraph_for_a_malformed_check_report(tmp_path: Path) -> None:
    bad = tmp_path / "check.json"
    bad.write_text(json.dumps({"schema": "pytorch-cuda/precision-check", "version": 2}))
    result = build_py("report", str(bad), "--out", str(tmp_path / "out"))
    assert result.returncode == 2, result.stderr
    assert "cannot be read" in result.stderr
    assert "Fix:" in result.stderr
    assert "Traceback" not in result.stderr


def test_cnn_page_draws_fp32_skipping_fp16s_skipped_step_and_says_so(tmp_path: Path) -> None:
    page = _page(tmp_path, RECORDED / "cnn.h200.json")
    assert (
        "GradScaler: scale 65536 -&gt; 32768, 1 step(s) skipped; fp16 is compared with fp32 skipping them too" in page
    )
    assert "fp32 skipping fp16&#39;s skipped steps" in page or "fp32 skipping fp16's skipped steps" in page
    assert page.count("<svg") == 1


def test_a_precision_limited_page_names_the_verdict_kind_and_the_gradients(tmp_path: Path) -> None:
    page = _page(tmp_path, RECORDED / "linear_regression.cpu.json")
    assert "fp32: bf16 is precision-limited on this model: bf16&#39;s loss stalls at" in page
    assert 'id="verdict-kind">Verdict kind: <strong>precision-limited</strong>: a precision&#39;s loss stalls' in page
    assert "zero gradients over the last 5 steps: fp32 0.00%, bf16 0.00%; first non-finite gradient: none" in page
    old = _page(tmp_path / "old", TRANSFORMER)  # a version 3 report: its verdict has no kind, the page none either
    assert "verdict-kind" not in old


def test_an_old_report_is_refused_with_the_command_that_upgrades_it(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError) as raised:
        write_report([H200, TRANSFORMER], tmp_path / "out")
    assert f"{TRANSFORMER} is a pytorch-cuda/precision-check report that cannot be read" in raised.value.cause
    assert "version 3 predates the judged lines (display) that a page shows" in raised.value.cause
    assert "`PYTHONPATH=/opt/pytorch-cuda python -m precision_check.upgrade OLD.json NEW.json`" in raised.value.fix
    assert not (tmp_path / "out").exists()


def test_the_page_shows_the_lines_precision_check_wrote_and_judges_nothing(tmp_path: Path) -> None:
    doc = json.loads(upgraded(tmp_path, TRANSFORMER).read_text())
    doc["display"]["rows"][0][1] = "judged-by-precision-check"
    doc["display"]["facts"] = ["a fact only the file holds"]
    doc["display"]["kind_meaning"] = "a meaning only the file holds"
    doc["verdict"]["kind"] = "faster"
    edited = tmp_path / "edited" / "transformer.h200.json"
    edited.parent.mkdir()
    edited.write_text(json.dumps(doc))
    page = _page_of(edited, tmp_path / "out")
    assert '<td class="num">judged-by-precision-check</td>' in page
    assert "<li>a fact only the file holds</li>" in page
    assert "fp32 noise floor" not in page
    assert "a meaning only the file holds" in page


def _page_of(source: Path, out: Path) -> str:
    (written,) = write_report([source], out)
    return written.read_text()
