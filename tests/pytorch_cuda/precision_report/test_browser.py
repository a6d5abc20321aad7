"""report.html in a real headless browser (Debian's chromium): no console messages, the charts drawn, a screenshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.precision_report.browser import load
from pytorch_cuda.precision_report.report_files import write_report
from tests.support.precision_measurements import upgraded
from tests.support.recorded_runs import H100, H200, ROOT, T4

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("chromium")]  # a real browser


@pytest.mark.parametrize(("paths", "charts"), [((H200,), 1), ((H100, T4), 3)])
def test_report_opens_cleanly_with_its_charts(tmp_path: Path, paths: tuple[Path, ...], charts: int) -> None:
    write_report(list(paths), tmp_path)
    shot = tmp_path / "screenshot.png"
    page = load(tmp_path / "report.html", shot)
    assert page.console == ()
    assert page.svg_count == charts
    assert page.dom.count('class="chart"') == charts
    assert "Precision support report" in page.dom
    assert shot.read_bytes().startswith(PNG_MAGIC)
    assert shot.stat().st_size > 20_000


def test_the_console_check_can_fail(tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><svg></svg><script>console.error('boom'); missing();</script></body></html>")
    page = load(broken)
    assert any("boom" in message for message in page.console)
    assert any("Uncaught ReferenceError" in message for message in page.console)


def test_a_precision_check_page_opens_cleanly_with_its_loss_curves(tmp_path: Path) -> None:
    source = upgraded(tmp_path, ROOT / "tests/precision_check/recorded/transformer.h200.json")
    (written,) = write_report([source], tmp_path)
    shot = tmp_path / "check.png"
    page = load(written, shot)
    assert page.console == ()
    assert page.svg_count == 1
    assert "bf16: 6.0x faster than fp32, 35% less memory" in page.dom
    assert shot.read_bytes().startswith(PNG_MAGIC)


def test_the_diff_page_opens_cleanly_with_its_regression_marked(tmp_path: Path) -> None:
    old = ROOT / "evidence/gpu-sessions/h200-2026-12-04/conformance-results-run1.json"
    new = ROOT / "evidence/gpu-sessions/h200-2026-12-04/conformance-results.json"
    page_path, shot = tmp_path / "diff.html", tmp_path / "diff.png"
    assert main(["report", "--diff", str(old), str(new), "--html", str(page_path), "--json"]) == 0
    page = load(page_path, shot)
    assert page.console == ()
    assert '<tr class="regression"><td>compile.compile_s.training</td>' in page.dom  # 3.11 s -> 3.92 s
    assert "1 regression(s) beyond noise" in page.dom
    assert shot.read_bytes().startswith(PNG_MAGIC)
