"""A rank that dies in the library's teardown, after every rank wrote its results, is a note, not a lost run;
a rank that dies before writing them is still a failure."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from torch.multiprocessing.spawn import ProcessExitedException

from conformance.support.processes.spawn import DistributedRunError, PendingRun, wait_distributed
from conformance.support.workloads.dist_job import DistJob


class _Process:
    def is_alive(self) -> bool:
        return False


class _DiedContext:
    """What torch.multiprocessing's context does when rank 0 aborted (SIGABRT)."""

    processes = (_Process(), _Process())

    def join(self, timeout: float | None = None) -> bool:
        raise ProcessExitedException("died", error_index=0, error_pid=1, exit_code=-6, signal_name="SIGABRT")


def _pending(tmp_path: Path) -> PendingRun:
    job = DistJob(("collectives",), "gloo", 2, 0, str(tmp_path), 30.0)
    return PendingRun(job, _DiedContext(), time.monotonic(), tmp_path)


def test_a_rank_dying_after_every_result_was_written_is_a_note(tmp_path: Path) -> None:
    for rank in range(2):
        (tmp_path / f"rank{rank}.json").write_text(json.dumps({"collectives": {"rank": rank}}))
    run = wait_distributed(_pending(tmp_path))
    assert [r["collectives"] for r in run.ranks] == [{"rank": 0}, {"rank": 1}]
    assert run.teardown is not None
    assert "gloo rank 0 died (exit code -6, signal SIGABRT) in the teardown" in run.teardown


def test_a_rank_dying_before_its_results_is_a_failure(tmp_path: Path) -> None:
    (tmp_path / "rank1.json").write_text(json.dumps({"collectives": {}}))  # rank 0 wrote nothing
    with pytest.raises(DistributedRunError, match=r"gloo rank 0 died \(exit code -6, signal SIGABRT\)"):
        wait_distributed(_pending(tmp_path))
