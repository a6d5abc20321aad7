"""Launch one process per rank with torch.multiprocessing, with a free port, a deadline, and child
failures turned into readable errors.

The start method is spawn, except when the caller asks for fork (the suite's background gloo ranks,
started before any check has run) and the ranks are gloo ranks of a process that has not initialised
CUDA and sees no GPU (the CPU-only run, e.g. the in-build checks): those are forked, so that they do
not import torch again (about 1.5 CPU-s each). A forked child must never use CUDA, nor an OpenMP pool
the parent has used, hence the conditions; NCCL ranks and every run on a GPU host are spawned."""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.multiprocessing.spawn import ProcessExitedException, ProcessRaisedException, start_processes

from conformance.support.probes.devices import gpu_count
from conformance.support.probes.setting_hint import known_setting_hint
from conformance.support.processes.dist_workers import run_rank
from conformance.support.processes.env import apply_safe_distributed_env
from conformance.support.workloads.dist_job import DistJob


class DistributedRunError(RuntimeError):
    """A rank failed, crashed or the group hung."""


@dataclass(frozen=True)
class DistributedRun:
    world_size: int
    backend: str
    ranks: tuple[dict[str, object], ...]
    wall_s: float
    teardown: str | None = None  # a rank that died after every rank had written its results (a library's teardown)


def find_free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _rank_errors(out_dir: Path) -> str:
    texts = [f"{p.name}:\n{p.read_text()[-2000:]}" for p in sorted(out_dir.glob("rank*.error"))]
    return "\n".join(texts)


@dataclass
class PendingRun:
    """Ranks started with ``start_distributed``; ``wait_distributed`` collects them."""

    job: DistJob
    context: Any
    started: float
    out_dir: Path

    def kill(self) -> None:
        for process in self.context.processes:
            if process.is_alive():
                process.kill()
                process.join(5)


def start_method(backend: str, fork: bool) -> str:
    """fork when asked, for gloo, in a process with no CUDA state and no GPU; spawn otherwise."""
    if fork and backend == "gloo" and not torch.cuda.is_initialized() and gpu_count() == 0:
        return "fork"
    return "spawn"


def start_distributed(
    tasks: tuple[str, ...],
    backend: str,
    world_size: int,
    out_dir: Path,
    timeout_s: float = 240.0,
    *,
    fork: bool = False,
) -> PendingRun:
    """Start ``world_size`` ranks running ``tasks`` (see _dist_workers.TASKS) without waiting for them.

    fork=True only from a process that has run no torch work yet (see the module's docstring)."""
    apply_safe_distributed_env()  # spawned children inherit os.environ
    out_dir.mkdir(parents=True, exist_ok=True)
    job = DistJob(
        tasks=tasks,
        backend=backend,
        world_size=world_size,
        port=find_free_port(),
        out_dir=str(out_dir),
        timeout_s=timeout_s,
    )
    started = time.monotonic()
    method = start_method(backend, fork)
    context = start_processes(run_rank, args=(job,), nprocs=world_size, join=False, start_method=method)
    assert context is not None
    return PendingRun(job, context, started, out_dir)


def wait_distributed(pending: PendingRun) -> DistributedRun:
    """Wait for the ranks (up to the job's deadline) and collect each rank's results."""
    job, context, out_dir = pending.job, pending.context, pending.out_dir
    backend, tasks, world_size, timeout_s = job.backend, job.tasks, job.world_size, job.timeout_s
    deadline = pending.started + timeout_s
    teardown = None
    try:
        while not context.join(timeout=max(0.1, min(5.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                finished = sorted(p.name for p in out_dir.glob("rank*.json"))
                raise DistributedRunError(
                    f"{backend} job {tasks} with {world_size} rank(s) timed out after {timeout_s:.0f}s "
                    f"(finished: {finished}); rerun with NCCL_DEBUG=INFO to see where it hangs"
                )
    except ProcessRaisedException as exc:
        raise DistributedRunError(f"{backend} rank {exc.error_index} raised:\n{exc}{known_setting_hint()}") from None
    except ProcessExitedException as exc:
        died = f"{backend} rank {exc.error_index} died (exit code {exc.exit_code}, signal {exc.signal_name})"
        if not _all_results_written(pending, min(deadline, time.monotonic() + RESULTS_GRACE_S)):
            raise DistributedRunError(f"{died}:\n{_rank_errors(out_dir)}") from None
        teardown = f"{died} in the teardown, after every rank had written its results; the results stand"
    finally:
        pending.kill()
    ranks = tuple(json.loads((out_dir / f"rank{r}.json").read_text()) for r in range(world_size))
    return DistributedRun(world_size, backend, ranks, time.monotonic() - pending.started, teardown)


RESULTS_GRACE_S = 10.0  # how long the other ranks may take to write their results once one rank has died


def _all_results_written(pending: PendingRun, until: float) -> bool:
    """Whether every rank wrote its results, waiting for the live ones until `until`."""
    wanted = [pending.out_dir / f"rank{r}.json" for r in range(pending.job.world_size)]
    while True:
        if all(path.exists() for path in wanted):
            return True
        alive = any(process.is_alive() for process in pending.context.processes)
        if not alive or time.monotonic() >= until:
            return all(path.exists() for path in wanted)
        time.sleep(0.1)


def run_distributed(
    tasks: tuple[str, ...], backend: str, world_size: int, out_dir: Path, timeout_s: float = 240.0
) -> DistributedRun:
    """Run ``tasks`` on ``world_size`` ranks and collect each rank's results."""
    return wait_distributed(start_distributed(tasks, backend, world_size, out_dir, timeout_s))
