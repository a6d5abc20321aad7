"""The cuDNN runtime-vs-compile check fails for a runtime older than torch's build or of another major.

torch._C._cudnn is patched by a sitecustomize, so these run wherever torch has cuDNN (inside the
image, where the suite's own tests run); a CPU-only torch skips them with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.support.suite_run import run_suite

CHECK = "test_cudnn_runtime_matches_compile_version"
pytestmark = pytest.mark.skipif(
    getattr(torch._C, "_cudnn", None) is None or torch.version.cuda is None,
    reason=f"torch {torch.__version__} has no cuDNN to check (CPU-only build); runs inside the image",
)


def _run_with_runtime(tmp_path: Path, runtime: tuple[int, int, int]) -> tuple[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        f"import torch\ntorch._C._cudnn.getRuntimeVersion = lambda: {runtime!r}\n", encoding="utf-8"
    )
    run = run_suite(tmp_path, keyword=CHECK, env={"PYTHONPATH": str(site)})
    return run.outcome(CHECK), run.message(CHECK)


@pytest.mark.parametrize(
    "runtime", [(9, 0, 0), (8, 99, 0), (10, 0, 0)], ids=["older minor", "older major", "newer major"]
)
def test_runtime_older_than_the_build_or_of_another_major_fails(tmp_path: Path, runtime: tuple[int, int, int]) -> None:
    outcome, message = _run_with_runtime(tmp_path, runtime)
    assert outcome == "failed", message
    assert "install the nvidia-cudnn wheel torch depends on" in message


def test_the_real_runtime_passes(tmp_path: Path) -> None:
    compiled = tuple(int(part) for part in torch._C._cudnn.getCompileVersion())
    outcome, message = _run_with_runtime(tmp_path, (compiled[0], compiled[1], compiled[2]))
    assert outcome == "passed", message
