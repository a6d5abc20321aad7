"""The image's `conformance` command: pytest's exit status is kept and the precision summary follows it.

Runs the rendered wrapper (images/bin/conformance) for real, with the image's paths
pointed at this checkout, on a fast CPU check of the real suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.support.results.summary import main
from pytorch_cuda_contract import paths
from tests.support.recorded_runs import H200, HALFWAY
from tests.support.suite_run import manifest_document, write_manifest

ROOT = Path(__file__).resolve().parents[4]
WRAPPER = ROOT / "images/bin/conformance"


def _wrapper(tmp_path: Path) -> Path:
    text = WRAPPER.read_text()
    text = text.replace(f"{paths.VENV_PATH}/bin/python", sys.executable)
    text = text.replace(paths.SUITE_DIR, str(ROOT / "conformance"))
    text = text.replace(f'PYTHONPATH="{paths.SHARE_DIR}"', f'PYTHONPATH="{ROOT}"')
    script = tmp_path / "conformance"
    script.write_text(text)
    script.chmod(0o755)
    return script


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTORCH_CUDA_MANIFEST", "PYTEST_ADDOPTS")}
    env[paths.RESULTS_DIR_ENV] = str(tmp_path / "out")
    command = [str(_wrapper(tmp_path)), "-c", str(tmp_path / "pytest.ini"), "-q", *args]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def _summarise(tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """stdout and stderr of the in-process summary of a results file holding `content` (it exits 0 on any file)."""
    path = tmp_path / paths.RESULTS_FILE
    path.write_text(content)
    assert main([str(path)]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_passing_run_prints_the_summary_and_writes_summary_md(tmp_path: Path) -> None:
    result = _run(tmp_path, "-m", "cpu", "-k", "test_dev_shm_is_large_enough")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "== precision summary (no GPU) ==" in result.stdout
    assert "No GPU was measured" in result.stdout
    summary = (tmp_path / "out" / paths.SUMMARY_FILE).read_text()
    assert summary.startswith("## Precision summary: no GPU")


def test_failing_run_keeps_pytests_exit_status(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path, manifest_document(pins={"torch": "0.0.1+cu128"}))  # a pin torch cannot meet
    result = _run(tmp_path, "-m", "cpu", "-k", "test_torch_version_matches_pin", "--manifest", str(manifest))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "== precision summary" in result.stdout
    assert "1 failed" in result.stdout


def test_usage_error_keeps_exit_4_and_summarises_nothing_old(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / paths.RESULTS_FILE).write_text(H200.read_text())  # an older run's file
    result = _run(tmp_path, "--no-such-option")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "precision summary" not in result.stdout
    assert not (tmp_path / "out" / paths.SUMMARY_FILE).exists()


@pytest.mark.parametrize(
    "content",
    [
        "",
        '{"schema": 2, "suite": "pytorch-cuda-conformance", "tests": {',
        '{"schema": 9, "suite": "pytorch-cuda-conformance"}',
    ],
)
def test_unreadable_results_never_crash_the_summary(
    tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, err = _summarise(tmp_path, content, capsys)
    assert "precision summary: not produced" in err
    assert "Fix:" in err
    assert "Traceback" not in err


def test_summary_of_the_h200_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = _summarise(tmp_path, H200.read_text(), capsys)
    assert "bf16   native   777           78%        15.4    1.7e-03" in out
    assert "Train in bf16 autocast, no GradScaler" in out
    assert "| bf16 | native | 777 | 78% | 15.4 | 1.7e-03 |" in (tmp_path / paths.SUMMARY_FILE).read_text()


def test_summary_of_a_run_that_failed_half_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = _summarise(tmp_path, HALFWAY.read_text(), capsys)
    assert "tests: 1 failed, 2 not run, 4 passed; the run is incomplete" in out
    assert "bf16   native   250           80%        13.1    -" in out  # measured before the failure
    assert "step ms" not in out  # the AMP test failed: no AMP table
