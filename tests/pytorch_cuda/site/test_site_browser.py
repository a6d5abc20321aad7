"""The site of a store of real runs in a real headless browser (Debian's chromium): no console messages, the
history charts drawn as SVG, the regression of a fault run marked, the links of the home table resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytorch_cuda.precision_report.browser import load
from pytorch_cuda.run_store import ingest
from pytorch_cuda.site.site_writer import build_site
from tests.support.recorded_runs import ROOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
RUNS = ROOT / "evidence/fault-coverage"


pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("chromium")]  # a real browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    store = root / "store"
    # five nightly runs: a history of fewer says "no history yet" and judges nothing, its faults included
    h200 = sorted((ROOT / "evidence/fleet-runs/h200").glob("*.json"))
    ingest([ROOT / "evidence/reports/h200/results.json", RUNS / "h200/runs/untouched.json", *h200], store)
    ingest([RUNS / "h100/runs/untouched.json"], store)
    ingest([RUNS / "h200/runs/busy-gpu.json"], store, fault="busy-gpu")
    build_site(store, root / "out")
    return root / "out"


def test_the_home_table_opens_cleanly_and_its_links_resolve(site: Path, tmp_path: Path) -> None:
    shot = tmp_path / "home.png"
    page = load(site / "index.html", shot)
    assert page.console == ()
    assert "NVIDIA H100 80GB HBM3" in page.dom
    assert "beyond noise" not in page.dom  # the busy-gpu run is a fault: judged on the GPU page, not a regression
    assert "fault: busy-gpu" not in page.dom
    for link in re.findall(r'href="([^"#]+)', page.dom):
        assert (site / link).is_file(), link
    assert shot.read_bytes().startswith(PNG_MAGIC)


def test_a_gpu_page_draws_history_and_marks_the_regression(site: Path, tmp_path: Path) -> None:
    shot = tmp_path / "h200.png"
    page = load(site / "gpu/nvidia-h200.html", shot, height=3200)
    assert page.console == ()
    assert page.svg_count == 6  # GEMM, conv, AMP, SDPA, compile and MAMF histories (nightly runs only)
    assert "What the history flags under faults and controls" in page.dom
    assert re.search(
        r'<td><span class="fault">fault: busy-gpu</span></td>\s*<td><code>gemm.fp32.tflops</code>', page.dom
    )
    assert "the numbers (a table)" in page.dom  # every chart has its text alternative
    assert shot.stat().st_size > 20_000


def test_the_expected_page_says_expected_not_measured(site: Path) -> None:
    page = load(site / "expected.html")
    assert page.console == ()
    t4 = re.search(r'<tr id="t4">.*?</tr>', page.dom, re.DOTALL)
    assert t4 is not None
    assert "expected, not measured" in t4[0]
    assert "bf16 needs compute capability &gt;= 8.0" in t4[0]
