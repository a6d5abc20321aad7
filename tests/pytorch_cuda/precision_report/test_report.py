"""`build.py report`: reports rendered from recorded result files, merged, partial and broken."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytorch_cuda.precision_report.report_files import SCHEMA_FILE, write_report
from tests.support.build_command import build_py
from tests.support.recorded_runs import H100, H200, HALFWAY, ROOT, T4, UNKNOWN_GPU


def _render(tmp_path: Path, *paths: Path) -> tuple[dict[str, Any], str, str]:
    write_report(list(paths), tmp_path)
    document = json.loads((tmp_path / "report.json").read_text())
    jsonschema.validate(document, json.loads(SCHEMA_FILE.read_text()))
    return document, (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()


def _choice(entry: dict[str, Any]) -> str | None:
    return next(str(r["choice"]) for r in entry["recommendation"] if r["topic"] == "precision")


def test_h200_report(tmp_path: Path) -> None:
    document, markdown, html = _render(tmp_path, H200)
    (entry,) = document["entries"]
    assert _choice(entry) == "bf16"
    assert entry["hardware"]["gpus"][0] == {
        "index": 0,
        "name": "NVIDIA H200",
        "compute_capability": "9.0",
        "memory_gib": 139.8,
        "sm_count": 132,
        "driver": "580.159.04",
        "cuda_driver_version": None,
    }
    bf16 = next(d for d in entry["dtypes"] if d["dtype"] == "bf16")
    assert bf16["gemm_tflops"] == pytest.approx(776.588, abs=1e-3)
    assert bf16["pct_peak"] == pytest.approx(78.49, abs=0.01)
    assert "| NVIDIA H200 | 9.0 | bare host, torch 2.11.0+cu130 | **bf16** | 50.4 (75%) |" in markdown
    assert html.count("<svg") == 1  # GEMM only: this run predates the AMP and compile timings
    assert 'id="chart-amp-missing"' in html
    assert 'id="chart-compile-missing"' in html
    assert "<script" not in html
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)  # self-contained: nothing to fetch


def test_two_gpus_merge_into_one_comparison(tmp_path: Path) -> None:
    document, markdown, html = _render(tmp_path, H100, T4)
    assert [(e["gpu"], _choice(e)) for e in document["entries"]] == [
        ("NVIDIA H100 80GB HBM3", "bf16"),
        ("Tesla T4", "fp16+GradScaler"),
    ]
    assert "| pytorch-cuda:v2.9 | bf16 | fp16+GradScaler |" in markdown  # the image × GPU pivot
    assert html.count("<svg") == 3
    h100 = document["entries"][0]
    assert h100["nccl"]["busbw_gbps"] == pytest.approx(372.4)
    assert h100["hardware"]["clocks"]["sm_mhz"] == 1980
    assert [g["index"] for g in h100["hardware"]["gpus"]] == [0, 1]
    t4 = document["entries"][1]
    assert t4["hardware"]["clocks"]["throttle_reasons"] == ["sw_power_cap"]
    assert next(d for d in t4["dtypes"] if d["dtype"] == "bf16")["verdict"] == "emulated"


def test_gpu_missing_from_the_peak_table(tmp_path: Path) -> None:
    document, markdown, _ = _render(tmp_path, UNKNOWN_GPU)
    dtypes = document["entries"][0]["dtypes"]
    assert all(d["peak_tflops"] is None and d["pct_peak"] is None for d in dtypes)
    assert "| 110 | 205 | 410 | 412 |" in markdown  # throughput without a percentage


def test_half_way_run_says_what_is_missing(tmp_path: Path) -> None:
    document, markdown, html = _render(tmp_path, HALFWAY)
    status = document["entries"][0]["status"]
    assert status["complete"] is False
    assert status["counts"] == {"passed": 4, "failed": 1, "not_run": 2}
    assert "**Incomplete run**" in markdown
    assert "CUDA out of memory" in html
    assert "This run is incomplete" in html


def test_partial_file_renders_with_the_gaps_listed(tmp_path: Path) -> None:
    partial = tmp_path / "partial.json"
    partial.write_text('{"schema": 2, "suite": "pytorch-cuda-conformance", "tests": {}}')
    document, markdown, _ = _render(tmp_path / "out", partial)
    assert document["entries"][0]["status"]["missing"] == [
        '"environment" is absent',
        '"totals" is absent',
        '"measurements" is absent',
    ]
    assert "No GPU was measured" in markdown


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "is not valid JSON"),
        ('{"schema": 2, "suite": "pytorch-cuda-conformance", "tests": {"a": {', "truncated"),
        ('{"schema": 3, "suite": "pytorch-cuda-conformance"}', "newer than this reader understands"),
        ('{"schema": 1, "suite": "something-else"}', "is not a pytorch-cuda conformance results file"),
    ],
)
def test_bad_input_exits_2_with_one_paragraph(tmp_path: Path, content: str, needle: str) -> None:
    bad = tmp_path / "results.json"
    bad.write_text(content)
    result = build_py("report", str(H200), str(bad), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert needle in result.stderr.replace("\n", " ")
    assert "Fix:" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()  # nothing half written


def test_cli_writes_three_files(tmp_path: Path) -> None:
    result = build_py("report", str(H200), str(T4), "--out", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    written = json.loads(result.stdout)["written"]
    assert sorted(Path(p).name for p in written) == ["report.html", "report.json", "report.md"]


def test_committed_h200_report_is_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """evidence/reports/h200 is what the renderer makes of its results.json (scripts/report-h200.sh regenerates it)."""
    committed = ROOT / "evidence/reports/h200"
    monkeypatch.chdir(ROOT)  # the script names its input relative to the repository root
    document, markdown, html = _render(tmp_path, Path("evidence/reports/h200/results.json"))
    assert (committed / "report.md").read_text() == markdown, "stale: run scripts/report-h200.sh"
    assert json.loads((committed / "report.json").read_text()) == document, "stale: run scripts/report-h200.sh"
    assert (committed / "report.html").read_text() == html, "stale: run scripts/report-h200.sh"
    assert (committed / "screenshot.png").read_bytes().startswith(b"\x89PNG")


def test_informational_numbers_are_shown_as_such_and_gated_ones_are_not(tmp_path: Path) -> None:
    """A schema-2 metric flagged informational (or, in a file from before the flag, one without a bound) is listed
    under "Recorded, not gated"; a bounded one is not."""
    raw = json.loads(H100.read_text())
    raw["measurements"]["compile.compile_s.training"]["informational"] = True
    raw["measurements"]["amp.speedup.bf16"].update({"bound": 1.5, "bound_kind": "min", "ceiling": 9.0})
    path = tmp_path / "flagged.json"
    path.write_text(json.dumps(raw))
    document, markdown, html = _render(tmp_path / "out", path)
    names = [m["name"] for m in document["entries"][0]["informational"]]
    assert "compile.compile_s.training" in names
    assert "amp.speedup.bf16" not in names
    assert "sdpa.default_backend.bf16" not in names  # a string: its test's assertion gates it
    assert "Recorded, not gated (informational)" in markdown
    assert "| `compile.compile_s.training` | 38.9 | s |" in markdown
    assert "Recorded, not gated (informational)" in html


def test_informational_checks_are_listed_apart_with_their_reason(tmp_path: Path) -> None:
    """A test that the suite marks informational (it documents a fact no fault can cross) is listed with its reason
    under "Checks that document, not gate"; a gated test is not."""
    raw = json.loads(H100.read_text())
    nodeid = "conformance/test_article.py::test_fp16_overflows_where_bf16_does_not[cuda]"
    raw["tests"][nodeid] = {"outcome": "passed", "phase": "call", "markers": ["gpu"], "duration_s": 0.1,
                            "message": None, "metrics": {}, "notes": []}  # fmt: skip
    raw["tests"][nodeid]["informational"] = "65536 cannot be stored in fp16 and is exact in bf16"
    path = tmp_path / "flagged.json"
    path.write_text(json.dumps(raw))
    document, markdown, html = _render(tmp_path / "out", path)
    checks = document["entries"][0]["informational_checks"]
    assert checks == [{"test": nodeid.rsplit("::", maxsplit=1)[-1], "reason": raw["tests"][nodeid]["informational"]}]
    assert "Checks that document, not gate (informational)" in markdown
    assert f"| `{checks[0]['test']}` | 65536 cannot be stored" in markdown
    assert "Checks that document, not gate (informational)" in html
    unflagged, plain_markdown, _ = _render(tmp_path / "plain", H100)
    assert unflagged["entries"][0]["informational_checks"] == []
    assert "Checks that document, not gate" not in plain_markdown
