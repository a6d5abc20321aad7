"""`build.py report --diff OLD NEW` on two real H200 runs (the committed report's and 2026-12-04's), and on
the second with faults written into it: each move beyond noise in the bad direction is a regression."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.precision_report.diff import diff_results
from pytorch_cuda.precision_report.diff_html import render_diff_html
from pytorch_cuda.precision_report.diff_markdown import render_diff_markdown
from pytorch_cuda_contract.results_file import ConformanceResults, load_results, parse_results

ROOT = Path(__file__).resolve().parents[3]
OLD = ROOT / "evidence/reports/h200/results.json"
NEW = ROOT / "evidence/gpu-sessions/h200-2026-12-04/conformance-results-run1.json"  # the first run of that day


def _status(results: ConformanceResults, name: str) -> str:
    rows = {row.name: row for row in diff_results(load_results(OLD), results).metrics}
    return rows[name].status


def _faulty(name: str, factor: float) -> ConformanceResults:
    """The 2026-12-04 run with one measurement (and its samples) scaled by `factor`."""
    document = json.loads(NEW.read_text())
    metric = document["measurements"][name]
    for key in ("value", "min", "median", "max"):
        if key in metric:
            metric[key] *= factor
    return parse_results(json.dumps(document), source="faulty.json")


def test_two_real_h200_runs() -> None:
    diff = diff_results(load_results(OLD), load_results(NEW))
    assert {row.status for row in diff.metrics if row.section == "GEMM"} == {"within noise"}
    assert {row.name: row.status for row in diff.metrics}["compile.compile_s.training"] == "improved"  # 4.18 -> 3.11 s
    assert diff.regressions == 1  # the NCCL exactness check failed on 2026-12-04 (bf16 PREMUL_SUM)
    (failed,) = [row for row in diff.tests if row.status == "regression"]
    assert failed.what == "conformance/test_distributed.py::test_nccl_allreduce_exact"
    text = render_diff_markdown(diff)
    assert "**1 regression(s) beyond noise.**" in text
    assert "| gemm.bf16.x_fp32 | 15 x | 14.9 x | -0.9% | ±5% | within noise |" in text
    assert "| torch | 2.11.0+cu130 | 2.11.0+cu130 |" in text


@pytest.mark.parametrize(
    ("metric", "factor", "status"),
    [
        ("gemm.bf16.x_fp32", 0.8, "regression"),  # tensor cores 20% slower against fp32
        ("gemm.bf16.x_fp32", 0.97, "within noise"),
        ("amp.speedup.fp16", 1.2, "improved"),
        ("amp.peak_mem_mib.bf16", 1.2, "regression"),  # lower is better
        ("compile.speedup.training", 0.85, "regression"),
        ("compile.speedup.training", 0.93, "within noise"),  # compile's floor is 10%
    ],
)
def test_a_move_beyond_noise_is_marked(metric: str, factor: float, status: str) -> None:
    assert _status(_faulty(metric, factor), metric) == status


def test_a_noisy_metric_gets_its_own_spread() -> None:
    document = json.loads(NEW.read_text())
    document["measurements"]["gemm.fp16.tflops"].update(min=600.0, max=800.0)  # a 27% spread over the samples
    document["measurements"]["gemm.fp16.tflops"]["value"] *= 0.85
    rows = {r.name: r for r in diff_results(load_results(OLD), parse_results(json.dumps(document))).metrics}
    assert rows["gemm.fp16.tflops"].status == "within noise"
    assert rows["gemm.fp16.tflops"].noise > 0.25


def test_a_verdict_that_leaves_native_is_a_regression() -> None:
    document = json.loads(NEW.read_text())
    document["dtypes"]["bf16"]["verdict"] = "emulated"
    diff = diff_results(load_results(OLD), parse_results(json.dumps(document)))
    assert [(r.what, r.status) for r in diff.verdicts if r.status != "same"] == [("bf16", "regression")]
    assert "| bf16 | native | emulated | **regression** |" in render_diff_markdown(diff)


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--diff", str(OLD), str(NEW), "--out", str(tmp_path)]) == 0
    assert "# Precision diff: old -> new" in (tmp_path / "diff.md").read_text()
    assert main(["report", "--diff", str(OLD), "--json"]) == 2
    assert "compares two result files" in capsys.readouterr().err
    assert main(["report", str(OLD)]) == 2  # without --diff, --out is needed
    assert "report needs --out DIR" in capsys.readouterr().err


def _rows(page: str) -> dict[str, str]:
    """Each row's first cell -> the row's class (its status)."""
    found = re.findall(r"<tr class=\"([^\"]*)\"><td[^>]*>([^<]*)</td>", page)
    return {name: status for status, name in found}


def test_the_html_marks_each_regression_beyond_noise() -> None:
    page = render_diff_html(diff_results(load_results(NEW), _faulty("gemm.bf16.x_fp32", 0.8)))
    rows = _rows(page)
    assert rows["gemm.bf16.x_fp32"] == "regression"  # the row tinted, its status in red
    assert rows["gemm.fp16.x_fp32"] == "within noise"
    assert '<td class="s-regression">regression</td>' in page
    assert "1 regression(s) beyond noise" in page
    assert '<p class="headline bad">' in page
    same = render_diff_html(diff_results(load_results(NEW), load_results(NEW)))
    assert "regression" not in _rows(same).values()
    assert "No regression beyond noise" in same
    assert "None: every test has the same outcome in both runs." in same


def test_the_html_escapes_what_the_results_carry() -> None:
    document = json.loads(NEW.read_text())
    document["tests"]["conformance/test_x.py::test_<script>"] = {"outcome": "failed", "message": "<b>boom</b>"}
    page = render_diff_html(diff_results(load_results(NEW), parse_results(json.dumps(document), source="x.json")))
    assert "<script>" not in page
    assert "test_&lt;script&gt;" in page


def test_the_command_writes_the_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "sub" / "diff.html"
    assert main(["report", "--diff", str(OLD), str(NEW), "--html", str(page), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["html"] == str(page)
    assert "<h1>Precision diff: old → new</h1>" in page.read_text()
    assert main(["report", str(OLD), "--html", str(page)]) == 2
    assert "report --html PATH is for --diff" in " ".join(capsys.readouterr().err.split())
