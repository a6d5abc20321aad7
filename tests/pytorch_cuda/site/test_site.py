"""build.py site over a store of real runs: cells, regressions with --diff's thresholds, expected support."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.run_store import StoreError, ingest
from pytorch_cuda.run_store.backend import open_store
from pytorch_cuda.site.cells import build_cells
from pytorch_cuda.site.expected import expected_table
from pytorch_cuda.site.site_writer import build_site

ROOT = Path(__file__).resolve().parents[3]
H200_RUNS = ROOT / "evidence/fault-coverage/h200/runs"
H100_RUNS = ROOT / "evidence/fault-coverage/h100/runs"
OLDER_H200 = ROOT / "evidence/reports/h200/results.json"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    ingest([OLDER_H200, H200_RUNS / "untouched.json", H100_RUNS / "untouched.json"], path)
    ingest([H200_RUNS / "busy-gpu.json"], path, fault="busy-gpu")
    return path


def test_a_fault_run_is_judged_against_the_history_and_never_reported_as_a_regression(
    store: Path, tmp_path: Path
) -> None:
    h100, h200 = build_cells(open_store(store))
    assert (h100.gpu, h200.gpu) == ("NVIDIA H100 80GB HBM3", "NVIDIA H200")
    assert h200.judged.no_history == "no history yet (2 of 5 runs)"  # two nights: nothing judged, and it says so
    assert not h200.experiments()
    fleet = sorted((ROOT / "evidence/fleet-runs/h200").glob("*.json"))  # four more nights: a history
    ingest(fleet, store)
    h100, h200 = build_cells(open_store(store))
    assert h200.judged.no_history is None
    flagged = {f.what: f for f in h200.experiments()}
    fp32 = flagged["gemm.fp32.tflops"]
    assert fp32.run.record.fault == "busy-gpu"
    assert fp32.status == "fault"
    assert fp32.new == "22.04 TFLOP/s"
    assert fp32.note.startswith("step -56.")
    assert not h200.last_flags()  # the home page: the latest nightly run flags nothing
    assert h200.last.stored.record.fault is None
    assert all(p.run.record.fault is None for _, series in h200.history for s in series for p in s.points)


def test_the_home_cell_takes_its_numbers_from_the_latest_clean_measured_run(store: Path) -> None:
    _, h200 = build_cells(open_store(store))
    assert h200.runs[-1].stored.record.fault == "busy-gpu"
    assert h200.last.stored.record.fault is None  # the last nightly run
    assert h200.advised is not None
    assert h200.advised.date == "2026-12-05 11:35"
    assert h200.advised.choice == "bf16"
    assert h200.advised.x_fp32("bf16") == pytest.approx(15.54, abs=0.01)
    assert h200.claims_run is h200.advised


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
    name = "data/bare-host-torch-2.11.0-cu130--nvidia-h200--driver-580.json"
    cell = json.loads((out / name).read_text())
    assert [r["fault"] for r in cell["runs"]] == [None, None, "busy-gpu"]
    assert [r["purpose"] for r in cell["runs"]] == ["nightly", "nightly", "fault"]
    assert cell["runs"][1]["report_entry"]["recommendation"][0]["choice"] == "bf16"
    assert cell["runs"][1]["identity"]["gpu_uuids"] == [cell["runs"][1]["identity"]["gpu_uuids"][0]]
    assert len(cell["runs"][1]["identity"]["gpu_uuids"][0]) == 16  # hashed, never the raw UUID
    assert "GPU-" not in (out / name).read_text()
    assert not any(p in (out / name).read_text() for p in ("/root/", "/tmp/", "/home/", "/work/"))  # no paths
    assert not [r for r in cell["regressions"] if r["status"] == "fault"]  # too short a history to judge
    home = (out / "index.html").read_text()
    assert "no history yet (2 of 5 runs)" in home
    assert "no history yet (2 of 5 runs)" in (out / "gpu/nvidia-h200.html").read_text()
    assert "<script" not in home
    assert f'href="{name}" download' in home
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


def test_two_nightly_digests_of_one_variant_are_one_history_and_a_drop_is_confirmed(tmp_path: Path) -> None:
    from tests.support.synthetic_history import night, store_nights, wobble

    store = tmp_path / "store"
    steady = [night(d, scale={"gemm.bf16.tflops": wobble(d)}, host=("a", "b")[d % 2]) for d in range(6)]
    store_nights(store, steady)
    dropped = [night(6 + d, scale={"gemm.bf16.tflops": 0.7}, host=("a", "b")[d]) for d in range(2)]
    store_nights(store, dropped)
    (cell,) = build_cells(open_store(store))
    assert len({r.stored.identity.digest for r in cell.runs}) == 8  # eight digests, one history
    assert [f.what for f in cell.last_flags()] == ["gemm.bf16.tflops"]
    assert cell.last_flags()[0].status == "confirmed"
    built = build_site(store, tmp_path / "site")
    assert built.regressions >= 1
    (row,) = [r for r in json.loads((tmp_path / "site/regressions.json").read_text()) if "gemm.bf16" in r["what"]]
    assert row["title"] == "Regression: gemm.bf16.tflops on NVIDIA H100 80GB HBM3 (cu12-runtime)"
    assert len(row["runs"]) == 2
    assert len(row["hosts"]) == 2


def test_the_expected_page_never_advises_a_gpu_the_image_has_no_kernels_for() -> None:
    from pytorch_cuda.site.expected import runs_on

    archs = {"cu12-runtime": ["sm_80", "sm_86", "sm_90"], "cu13-runtime": ["sm_75", "sm_90", "sm_100", "sm_120"]}
    rows = {e.gpu: e for e in expected_table([], archs)}
    assert rows["V100"].kernels == (("cu12-runtime", False), ("cu13-runtime", False))
    assert rows["V100"].answer.startswith("Not with these images: none has kernels for compute capability 7.0")
    assert rows["L4"].kernels == (("cu12-runtime", True), ("cu13-runtime", False))  # sm_86 cubins run on 8.9
    assert rows["L4"].answer.startswith("Yes")
    assert runs_on(rows["B200"].cc, ["sm_90", "compute_90"])  # PTX is compiled for a newer GPU
    assert not runs_on(rows["B200"].cc, ["sm_90"])


def test_every_history_chart_is_well_formed_svg_with_a_line_per_metric(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    from pytorch_cuda.site.chart import history_chart

    store = tmp_path / "s"
    ingest(sorted((ROOT / "evidence/fleet-runs/h100").glob("*.json")), store)
    (cell,) = build_cells(open_store(store))
    drawn = 0
    for title, series in cell.history:
        svg = history_chart(title, series)
        if svg is None:
            continue
        root = ET.fromstring(svg)
        lines = root.findall("{http://www.w3.org/2000/svg}polyline")
        assert len(lines) == sum(1 for s in series if s.points), title
        assert "matplotlib" not in svg
        drawn += 1
    assert drawn == len([t for t, s in cell.history if any(x.points for x in s)]) >= 5


def test_a_page_changes_only_when_its_own_inputs_do(store: Path, tmp_path: Path) -> None:
    before = tmp_path / "before"
    build_site(store, before)
    ingest(sorted((ROOT / "evidence/fleet-runs/h200").glob("*.json")), store)  # more runs, in the H200's history
    after = tmp_path / "after"
    build_site(store, after)
    h100 = [p for p in before.glob("run/*.html") if "H100" in p.read_text()]
    assert h100
    for page in [*h100, before / "gpu/nvidia-h100-80gb-hbm3.html"]:  # another history's pages: the same bytes
        assert (after / page.relative_to(before)).read_bytes() == page.read_bytes()
    assert "from 4 stored run(s)" in (before / "index.html").read_text()  # the run count: the home page only
    assert "from 8 stored run(s)" in (after / "index.html").read_text()
    assert "stored run(s)" not in (after / "expected.html").read_text()
