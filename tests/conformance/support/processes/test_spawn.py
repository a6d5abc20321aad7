"""The multi-GPU DDP+AMP+compile worker, exercised on CPU with gloo (2 ranks).

On GPU hosts it runs with NCCL under the `multigpu` marker; this keeps its logic
covered in CI, where there are no GPUs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.support.processes.spawn import DistributedRunError, run_distributed


def test_ddp_amp_compile_worker_on_gloo(tmp_path: Path) -> None:
    run = run_distributed(("ddp_amp_compile",), "gloo", 2, tmp_path / "ranks", timeout_s=500)
    for rank_result in run.ranks:
        result = rank_result["ddp_amp_compile"]
        assert isinstance(result, dict)
        assert result["losses_finite"] is True
        assert result["max_cross_rank_param_difference"] == 0.0
        assert result["dynamo_unique_graphs"] > 0  # the model's forward is compiled, not run eager under DDP


def test_child_failure_is_reported_with_its_traceback(tmp_path: Path) -> None:
    with pytest.raises(DistributedRunError, match="KeyError: 'no_such_task'"):
        run_distributed(("no_such_task",), "gloo", 2, tmp_path / "ranks", timeout_s=120)


def test_one_rank_collectives_still_catch_a_collective_that_does_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On one rank SUM/MAX/AVG are identities; the gather into a NaN-filled buffer is not."""
    import torch
    import torch.distributed as dist

    from conformance.support.workloads.collectives import task_collectives
    from conformance.support.workloads.dist_job import DistJob

    job = DistJob(("collectives",), "gloo", 1, 0, str(tmp_path), 60.0)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        healthy = task_collectives(0, job, torch.device("cpu"))
        monkeypatch.setattr(dist, "all_gather_into_tensor", lambda output, tensor, **_: None)
        broken = task_collectives(0, job, torch.device("cpu"))
    finally:
        dist.destroy_process_group()
    assert healthy["reduction_mismatches"] == healthy["op_mismatches"] == []
    assert healthy["unsupported"] == []
    assert broken["reduction_mismatches"] == []
    assert broken["op_mismatches"] == [f"all_gather_into_tensor: {1 << 16} elements wrong"]
