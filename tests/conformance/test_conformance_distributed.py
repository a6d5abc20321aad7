"""The multi-GPU DDP+AMP+compile worker, exercised on CPU with gloo (2 ranks).

On GPU hosts it runs with NCCL under the `multigpu` marker; this keeps its logic
covered in CI, where there are no GPUs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance._spawn import DistributedRunError, run_distributed


def test_ddp_amp_compile_worker_on_gloo(tmp_path: Path) -> None:
    run = run_distributed(("ddp_amp_compile",), "gloo", 2, tmp_path / "ranks", timeout_s=500)
    for rank_result in run.ranks:
        result = rank_result["ddp_amp_compile"]
        assert isinstance(result, dict)
        assert result["losses_finite"] is True
        assert result["max_cross_rank_param_difference"] == 0.0


def test_child_failure_is_reported_with_its_traceback(tmp_path: Path) -> None:
    with pytest.raises(DistributedRunError, match="KeyError: 'no_such_task'"):
        run_distributed(("no_such_task",), "gloo", 2, tmp_path / "ranks", timeout_s=120)
