"""build.py site over a store of real runs: cells, regressions with --diff's thresholds, expected support."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.run_store import StoreError, ingest, read_store
from pytorch_cuda.site import build_site
from pytorch_cuda.site.cells import build_cells
from pytorch_cuda.site.expected import expected_table

ROOT = Path(__file__).resolve().parents[3]
H200_RUNS = ROOT / "docs/fault-coverage/h200/runs"
H100_RUNS = ROOT / "docs/fault-coverage/h100/runs"
OLDER_H200 = ROOT / "docs/reports/h200/results.json"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    ingest([OLDER_H200, H200_RUNS / "untouched.json", H100_RUNS / "untouched.json"], path)
    ingest([H200_RUNS / "busy-gpu.json"], path, fault="busy-gpu")
    return path


def test_a_fault_run_is_flagged_against_the_last_clean_run(store: Path) -> None:
    h100, h200 = build_cells(read_store(store))
    assert (h100.gpu, h200.gpu) == ("NVIDIA H100 80GB HBM3", "NVIDIA H200")
    flagged = {f.what: f for f in h200.flags}
    bf16 = flagged["gemm.bf16.tflops"]
    assert bf16.run.record.fault == "busy-gpu"
    assert bf16.baseline.results.started_at == "2026-12-05T11:35:11+00:00"  # untouched, not the older run
    assert (bf16.old, bf16.new) == ("793 TFLOP/s", "681.3 TFLOP/s")
    assert bf16.note.startswith("-14.1%")
    assert "conformance/test_throughput.py::test_gemm_throughput[fp32]" in flagged
    assert "gemm.bf16.tflops" not in {f.what for f in h100.flags}  # one run: no baseline, nothing flagged


def test_the_home_cell_takes_its_numbers_from_the_latest_clean_measured_run(store: Path) -> None:
    _, h200 = build_cells(read_store(store))
    assert h200.last.stored.record.fault == "busy-gpu"
    assert h200.advised is not None
    assert h200.advised.date == "2026-12-05 11:35"
    assert h200.advised.choice == "bf16"
    assert h200.advised.x_fp32("bf16") == pytest.approx(15.54, abs=0.01)
    assert h200.judged is h200.advised


def test_a_gpu_never_measured_gets_the_expected_answer() -> None:
    rows = {e.gpu: e for e in expected_table(["NVIDIA H100 80GB HBM3"])}
    assert (rows["T4"].bf16, rows["T4"].fp16, rows["T4"].tensor_cores) == (False, True, 2)
    assert rows["T4"].answer.startswith("No: bf16 needs compute capability >= 8.0")
    assert (rows["L4"].bf16, rows["L4"].architecture) == (True, "Ada")
    assert rows["H100"].measured_as == "NVIDIA H100 80GB HBM3"
    assert rows["H200"].measured_as is None  # GH200 and H200 are other words than H100


def test_the_site_has_every_page_and_each_cell_as_json(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    built = build_site(store, out)
    assert {"index.html", "expected.html", "gpu/nvidia-h200.html", "gpu/nvidia-h100-80gb-hbm3.html"} <= set(built.pages)
    assert sum(p.startswith("run/") for p in built.pages) == 4
    cell = json.loads((out / "data/bare-torch-2.11.0_cu130-cuda-13.0--nvidia-h200.json").read_text())
    assert [r["fault"] for r in cell["runs"]] == [None, None, "busy-gpu"]
    assert cell["runs"][1]["report_entry"]["recommendation"][0]["choice"] == "bf16"
    assert "gemm.bf16.tflops" in {r["what"] for r in cell["regressions"]}
    home = (out / "index.html").read_text()
    assert "<script" not in home
    assert 'href="data/bare-torch-2.11.0_cu130-cuda-13.0--nvidia-h200.json" download' in home
    assert "expected, not measured" in (out / "expected.html").read_text()


def test_an_out_folder_that_is_not_a_site_is_left_alone(store: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep")
    with pytest.raises(StoreError, match="is left alone"):
        build_site(store, mine)
    assert (mine / "thesis.tex").read_text() == "keep"
    assert main(["site", "--store", str(store), "--out", str(tmp_path / "site")]) == 0
    assert main(["site", "--store", str(store), "--out", str(tmp_path / "site")]) == 0  # an earlier site: replaced


def test_a_metric_that_diff_does_not_judge_is_charted_never_flagged(tmp_path: Path) -> None:
    from pytorch_cuda.site.history import flags, series

    store = tmp_path / "store"
    for n, (started, tflops) in enumerate((("2026-12-06T03:00:00+00:00", 837.0), ("2026-12-07T03:00:00+00:00", 600.0))):
        document = json.loads((H200_RUNS / "untouched.json").read_text())
        document["started_at"] = started
        document["measurements"]["mamf.bf16.tflops"] = {"value": tflops, "unit": "TFLOP/s", "informational": True}
        path = tmp_path / f"night{n}.json"
        path.write_text(json.dumps(document))
        ingest([path], store)
    runs = read_store(store)
    mamf = series(runs, "mamf.bf16.tflops")
    assert mamf is not None
    assert [p.value for p in mamf.points] == [837.0, 600.0]
    assert not mamf.judged
    assert not any(p.regression for p in mamf.points)
    assert "mamf.bf16.tflops" not in {f.what for f in flags(runs)}
    gemm = series(runs, "gemm.bf16.tflops")
    assert gemm is not None
    assert gemm.judged
    assert gemm.points[1].row is not None
    assert gemm.points[1].row.status == "within noise"  # the same measurement twice
