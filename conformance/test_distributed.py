"""Distributed: exact all-reduce, DDP compression hooks, DDP+AMP+compile, busbw.

NCCL runs one process per visible GPU.  On one GPU only what one rank can show counts: PREMUL_SUM, all_gather and
reduce_scatter must change or write their output, and a compression hook must not change DDP's update; SUM/MAX/AVG
(identities on one rank) and the cross-rank agreement are not verified there (a named skip, a note).  The same logic
runs on CPU with gloo and world size 2 (cpu marker) for CI.
"""

from __future__ import annotations

from typing import cast

import pytest
import torch

from conformance.support.expectations.bounds import busbw_gate
from conformance.support.probes import nvml
from conformance.support.probes.devices import list_gpus
from conformance.support.processes.background import GLOO_TASKS, GLOO_WORLD_SIZE, take_pending_gloo
from conformance.support.processes.spawn import DistributedRun, PendingRun, run_distributed, wait_distributed
from conformance.support.results.recorder import RecordMetric, RecordNote
from conformance.support.workloads.collectives import PREMUL as PREMUL_FACTOR

# Normalized error of the 10-step parameter update with a compression hook vs
# without.  Measured: fp16 6.5e-5 (H200, NCCL, 1 rank) and 1.26e-4 (CPU, gloo,
# 2 ranks); bf16 4.8e-4 (H200, NCCL).  gloo cannot run the bf16 hook.
HOOK_UPDATE_BOUND = {"fp16": 5e-4, "bf16": 2e-3}


def _run(
    tmp_path_factory: pytest.TempPathFactory, backend: str, world_size: int, tasks: tuple[str, ...]
) -> DistributedRun:
    return run_distributed(tasks, backend, world_size, tmp_path_factory.mktemp(f"{backend}-{'-'.join(tasks)}"))


@pytest.fixture(scope="module")
def nccl_run(tmp_path_factory: pytest.TempPathFactory) -> DistributedRun:
    return _run(tmp_path_factory, "nccl", torch.cuda.device_count(), ("collectives", "ddp_hooks"))


@pytest.fixture(scope="module")
def gloo_run(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> DistributedRun:
    """The gloo ranks started in the background at collection (support/processes/background.py), else now."""
    pending = take_pending_gloo(pytestconfig)
    if isinstance(pending, PendingRun):
        return wait_distributed(pending)
    return _run(tmp_path_factory, "gloo", GLOO_WORLD_SIZE, GLOO_TASKS)


REDUCTIONS = ("sum", "max", "avg")
ONE_RANK_REDUCTIONS = "one rank: SUM/MAX/AVG are identities, nothing to verify; needs 2+ GPUs"
ONE_RANK_CROSS_RANK = (
    "one rank: the cross-rank parameter comparison would compare rank 0 with itself: not verified; needs 2+ GPUs"
)


def _task(run: DistributedRun, task: str, rank: int = 0) -> dict[str, object]:
    return cast(dict[str, object], run.ranks[rank][task])


def _op(item: str) -> str:
    """The op of a worker's entry: "fp32/avg: ..." -> "avg", "all_gather_into_tensor: ..." -> the name."""
    return item.split(":", maxsplit=1)[0].split(" ", maxsplit=1)[0].rsplit("/", maxsplit=1)[-1]


def _problems(run: DistributedRun, key: str, record_note: RecordNote, may_lack: tuple[str, ...]) -> list[str]:
    """Every rank's ``key`` mismatches (an unexpected exception is one), and the documented refusals (sorted by the
    worker) of this check's ops that are not in ``may_lack`` (a gap of the backend, e.g. AVG on gloo before torch
    2.8: a note)."""
    reductions = key == "reduction_mismatches"
    problems = []
    for rank in range(run.world_size):
        result = _task(run, "collectives", rank)
        problems += [f"rank {rank}: {m}" for m in cast(list[str], result[key])]
        for item in cast(list[str], result["unsupported"]):
            if (_op(item) in REDUCTIONS) != reductions:
                continue
            if _op(item) in may_lack:
                record_note(f"rank {rank} {run.backend} does not support {item}")
            else:
                problems.append(f"rank {rank}: {item}")
    return problems


def _run_notes(run: DistributedRun, record_note: RecordNote) -> None:
    if run.teardown is not None:
        record_note(run.teardown)
    record_note(f"{run.backend} world size {run.world_size}, {run.wall_s:.1f}s including spawn")


def check_reductions(run: DistributedRun, record_note: RecordNote, may_lack: tuple[str, ...] = ()) -> None:
    """SUM/MAX/AVG in fp32/fp16/bf16 exact against a float64 CPU reference on every rank; an error other than a
    documented refusal fails.  On one rank they are identities: a wrong value or an error still fails, a match
    proves nothing and skips."""
    problems = _problems(run, "reduction_mismatches", record_note, may_lack)
    assert not problems, f"{run.backend} all_reduce SUM/MAX/AVG are not exact: {problems}"
    if run.world_size == 1:
        pytest.skip(ONE_RANK_REDUCTIONS)


def check_ops_run(run: DistributedRun, record_note: RecordNote) -> None:
    """PREMUL_SUM (x3) changes the tensor, all_gather / reduce_scatter write a NaN-filled buffer: on any number of
    ranks, a collective that does nothing fails here."""
    _run_notes(run, record_note)
    problems = _problems(run, "op_mismatches", record_note, ())
    assert not problems, (
        f"{run.backend} collectives did not run or were wrong: {problems}; a collective that returns without "
        "writing its output (a patched torch.distributed, a broken NCCL) leaves the input or the NaN fill"
    )


def check_hooks(run: DistributedRun, record_metric: RecordMetric, record_note: RecordNote) -> None:
    result = _task(run, "ddp_hooks")
    for item in cast(list[str], result["unsupported"]):
        record_note(f"{run.backend}: not checked: {item}")
    errors = cast(dict[str, float], result["update_error_vs_no_hook"])
    cross_rank = cast(dict[str, float], result["max_cross_rank_param_difference"])
    for name, error in errors.items():
        record_metric(
            f"ddp_{name}_hook_update_normalized_error", error, "1", bound=HOOK_UPDATE_BOUND[name], bound_kind="max"
        )
    bad = {n: f"{e:.2e}" for n, e in errors.items() if not e < HOOK_UPDATE_BOUND[n]}
    assert not bad, (
        f"DDP with compression hooks diverges from DDP without them ({run.backend}): {bad} (bounds "
        f"{HOOK_UPDATE_BOUND}): the hook loses more than fp16/bf16 rounding or its all_reduce does not average; "
        "check for a patched torch.distributed (default_hooks, all_reduce)"
    )
    if run.world_size == 1:
        record_note(ONE_RANK_CROSS_RANK)
        return
    diverged = {n: d for n, d in cross_rank.items() if d != 0.0}
    assert not diverged, (
        f"DDP parameters differ across ranks ({run.backend}): {diverged} (NaN: the comparison's all_gather did not "
        "write its buffers); the ranks did not average the same gradients"
    )


def _interconnect(world_size: int) -> tuple[str, str]:
    gpus = list_gpus()[:world_size]
    return nvml.interconnect([(gpu.uuid, gpu.index) for gpu in gpus])


def check_busbw(run: DistributedRun, record_metric: RecordMetric, interconnect: tuple[str, str]) -> None:
    result = _task(run, "collectives")
    busbw = float(cast(float, result["busbw_gbps"]))
    gate = busbw_gate(*interconnect)
    record_metric("nccl.busbw_gbps", busbw, "GB/s", **gate.metric_fields())
    record_metric("allreduce_message", float(cast(int, result["busbw_message_bytes"])), "bytes")
    record_metric("allreduce_world_size", run.world_size, "ranks")
    problem = gate.violation(busbw)
    assert problem is None, (
        f"NCCL all-reduce bus bandwidth over {run.world_size} GPUs: {problem}: too slow: NCCL is not using "
        "NVLink/P2P or shared memory (NCCL_P2P_DISABLE / NCCL_SHM_DISABLE set, IOMMU/ACS blocking P2P), run with "
        "NCCL_DEBUG=INFO; too fast: the timed all_reduce did no work"
    )


ONE_RANK_PREMUL = (
    "one rank: bf16 PREMUL_SUM is judged where it is used, across 2+ GPUs (FSDP's pre-divided sum); one rank gave: "
)


def judge_bf16_premul_ranks(outcomes: list[dict[str, str]], world_size: int) -> tuple[str | None, str | None]:
    """Every rank's bf16 PREMUL_SUM (collectives.judge_bf16_premul): (the failure, or None; the skip reason, or None).
    On 2+ ranks anything but exact fails, all zeros included; a documented refusal is a named skip. On one rank
    the result is not judged (a named skip that says what it gave); a tensor left unchanged fails there in
    test_nccl_collectives_write_their_output."""
    wrong = [f"rank {r}: {o['note']}" for r, o in enumerate(outcomes) if o["outcome"] not in ("exact", "refused")]
    refused = [f"rank {r}: {o['note']}" for r, o in enumerate(outcomes) if o["outcome"] == "refused"]
    if world_size == 1:
        return None, ONE_RANK_PREMUL + "; ".join(o["note"] for o in outcomes)
    if wrong:
        return f"NCCL bf16 all_reduce with PREMUL_SUM is not {PREMUL_FACTOR:g} x the sum: " + "; ".join(wrong), None
    if refused:
        return None, "this torch/NCCL refuses bf16 PREMUL_SUM: " + "; ".join(refused)
    return None, None


def check_compiled(results: list[dict[str, object]], record_note: RecordNote) -> None:
    """torch.compile must have compiled something in every rank: dynamo's graph count."""
    record_note(f"Inductor FX-graph cache lookups in rank 0: {results[0].get('inductor_graphs')}")
    graphs = [int(cast(int, result.get("dynamo_unique_graphs", 0))) for result in results]
    assert all(count > 0 for count in graphs), (
        f"torch.compile of the DDP model compiled no graph (dynamo graphs per rank: {graphs}): it ran eager; "
        "TORCHDYNAMO_DISABLE=1 (or torch._dynamo.config.disable) in the environment turns torch.compile off"
    )


@pytest.mark.gpu
def test_nccl_allreduce_exact(nccl_run: DistributedRun, record_note: RecordNote) -> None:
    """Fails when SUM/MAX/AVG/PREMUL_SUM(×3) on fp32/fp16/bf16 with integer data, all_gather and reduce_scatter into
    NaN-filled buffers, differ from a float64 CPU reference (one rank per visible GPU: on one GPU PREMUL_SUM and the
    gathers still prove the op runs), or an op raises."""
    check_reductions(nccl_run, record_note)


@pytest.mark.gpu
def test_nccl_collectives_write_their_output(nccl_run: DistributedRun, record_note: RecordNote) -> None:
    """Fails when PREMUL_SUM (x3, bf16 included) leaves its tensor unchanged, all_gather or reduce_scatter leave their
    NaN-filled output, or an op raises (on one GPU too); bf16 PREMUL_SUM's values: test_nccl_bf16_premul_sum_exact."""
    check_ops_run(nccl_run, record_note)


@pytest.mark.gpu
def test_nccl_bf16_premul_sum_exact(nccl_run: DistributedRun, record_note: RecordNote) -> None:
    """Fails when a bf16 all_reduce with PREMUL_SUM (×3, a Python-scalar factor) across 2+ GPUs is not exactly 3 × the
    sum on every rank: all zeros (the factor read as a bf16) fails. One GPU: a named skip with what it gave."""
    ranks = range(nccl_run.world_size)
    outcomes = [cast(dict[str, str], _task(nccl_run, "collectives", rank)["bf16_premul"]) for rank in ranks]
    for rank, outcome in enumerate(outcomes):
        record_note(f"rank {rank}: {outcome['note']}")
    failure, skip = judge_bf16_premul_ranks(outcomes, nccl_run.world_size)
    assert failure is None, failure + (
        ": FSDP's bf16 reduce-scatter with a pre-divide factor gets wrong gradients; pass the factor as a bf16 "
        "tensor or reduce with AVG"
    )
    if skip is not None:
        pytest.skip(skip)


@pytest.mark.gpu
def test_ddp_compression_hooks_match_plain_ddp_nccl(
    nccl_run: DistributedRun, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """Fails when DDP with `fp16_compress_hook`/`bf16_compress_hook` drifts from plain DDP, or ranks disagree."""
    check_hooks(nccl_run, record_metric, record_note)


@pytest.mark.multigpu
def test_nccl_allreduce_bus_bandwidth(nccl_run: DistributedRun, record_metric: RecordMetric) -> None:
    """Fails when busbw = algbw·2(n−1)/n for a 256 MiB all-reduce is below the floor of the GPUs' link as NVML
    reads it (NVLink, PCIe, or unknown: bounds.BUSBW_FLOOR_GBPS), or above any link's speed (NCCL on TCP sockets is
    below the NVLink and PCIe floors)."""
    check_busbw(nccl_run, record_metric, _interconnect(nccl_run.world_size))


@pytest.mark.multigpu
def test_ddp_amp_compile_parameters_identical_across_ranks(
    tmp_path_factory: pytest.TempPathFactory, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """Fails when DDP + bf16 autocast + `torch.compile` leaves ranks with different parameters or non-finite losses."""
    run = _run(tmp_path_factory, "nccl", torch.cuda.device_count(), ("ddp_amp_compile",))
    result = _task(run, "ddp_amp_compile")
    losses = cast(list[float], result["losses"])
    record_metric("ddp_amp_compile_final_loss", losses[-1], "mse")
    check_compiled([_task(run, "ddp_amp_compile", rank) for rank in range(run.world_size)], record_note)
    assert result["losses_finite"], f"DDP+AMP+compile produced non-finite losses: {losses}"
    difference = float(cast(float, result["max_cross_rank_param_difference"]))
    assert difference == 0.0, f"DDP+AMP+compile parameters differ across ranks by up to {difference}"


@pytest.mark.cpu
def test_gloo_allreduce_exact(gloo_run: DistributedRun, record_note: RecordNote) -> None:
    # gloo before torch 2.8 lacks ReduceOp.AVG ("Cannot use ReduceOp.AVG with Gloo"): noted; any other error fails.
    """Fails when SUM/MAX/AVG or the gathers on gloo with 2 ranks differ from the float64 CPU reference or do not run
    (an AVG that older gloo lacks is noted, any other gloo error fails). The ranks are spawned right after collection
    and collected here, so they overlap the GPU checks."""
    _run_notes(gloo_run, record_note)
    problems = _problems(gloo_run, "reduction_mismatches", record_note, ("avg",))
    problems += _problems(gloo_run, "op_mismatches", record_note, ())
    assert not problems, f"gloo collectives are not exact or did not run: {problems}"


@pytest.mark.cpu
def test_ddp_compression_hooks_match_plain_ddp_gloo(
    gloo_run: DistributedRun, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """Fails when DDP with `fp16_compress_hook` on gloo with 2 ranks drifts from plain DDP, or ranks disagree (the bf16
    hook is NCCL only, noted). The ranks are spawned right after collection and collected here, so they overlap the
    GPU checks."""
    check_hooks(gloo_run, record_metric, record_note)
