# mypy: disable-error-code="arg-type,operator"
# (the checks are called with plain callables and list.append for their RecordNote/RecordMetric protocols)
"""The distributed checks' judgement on broken inputs (CPU only): one-rank reductions skip, a cross-rank comparison
on one rank is not counted, an unexpected collective error fails, a compile that compiled nothing fails, and the
bus-bandwidth floor follows the NVLink/PCIe topology read from (fake) NVML; the bus-bandwidth formula, and all-reduce
expectations exact in bf16."""

from __future__ import annotations

import types
import warnings
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from conformance.support.expectations.bounds import busbw_gate
from conformance.support.probes import nvml
from conformance.support.processes.spawn import DistributedRun
from conformance.support.workloads.collectives import (
    allreduce_expected,
    allreduce_inputs,
    bus_bandwidth_gbps,
    task_collectives,
    unsupported_op_error,
)
from conformance.support.workloads.dist_job import DistJob

with warnings.catch_warnings():  # the suite registers its cpu/gpu markers in its own conftest, not here
    warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
    from conformance import test_distributed as checks


def _run(backend: str, world_size: int, **collectives: object) -> DistributedRun:
    result = {"reduction_mismatches": [], "op_mismatches": [], "unsupported": [], **collectives}
    return DistributedRun(world_size, backend, tuple({"collectives": result} for _ in range(world_size)), 1.0)


def test_one_rank_reductions_skip_as_not_verified() -> None:
    notes: list[str] = []
    with pytest.raises(pytest.skip.Exception, match="one rank: SUM/MAX/AVG are identities, nothing to verify"):
        checks.test_nccl_allreduce_exact(_run("nccl", 1), notes.append)
    # a wrong value is a failure even on one rank
    with pytest.raises(AssertionError, match="fp32/sum: 3 of 65536 elements differ"):
        checks.test_nccl_allreduce_exact(
            _run("nccl", 1, reduction_mismatches=["fp32/sum: 3 of 65536 elements differ"]), notes.append
        )
    checks.test_nccl_allreduce_exact(_run("nccl", 2), notes.append)  # two ranks: verified, passes


def test_ops_that_must_run_stay_gated_on_one_rank() -> None:
    notes: list[str] = []
    checks.test_nccl_collectives_write_their_output(_run("nccl", 1), notes.append)
    assert "nccl world size 1, 1.0s including spawn" in notes
    broken = _run("nccl", 1, op_mismatches=["fp32/premul_sum: the tensor is unchanged (the reduction did not run)"])
    with pytest.raises(AssertionError, match=r"did not run or were wrong.*premul_sum"):
        checks.test_nccl_collectives_write_their_output(broken, notes.append)
    refused = _run("nccl", 1, unsupported=["fp16/premul_sum: ValueError: PreMulSum requires NCCL>=2.11.1"])
    with pytest.raises(AssertionError, match="PreMulSum requires"):
        checks.test_nccl_collectives_write_their_output(refused, notes.append)


def _premul(outcome: str, note: str = "bf16 PREMUL_SUM (x3): what it gave") -> dict[str, str]:
    return {"outcome": outcome, "note": note}


def test_bf16_premul_sum_all_zeros_fails_on_two_ranks() -> None:
    """Issue 52: all zeros was a note; on 2+ ranks it fails, and so does any other wrong value."""
    notes: list[str] = []
    checks.test_nccl_bf16_premul_sum_exact(_run("nccl", 2, bf16_premul=_premul("exact")), notes.append)
    for outcome in ("all_zero", "wrong", "unchanged", "raised"):
        broken = _run("nccl", 2, bf16_premul=_premul(outcome, f"bf16 PREMUL_SUM (x3): {outcome}"))
        with pytest.raises(AssertionError, match=rf"PREMUL_SUM is not 3 x the sum: rank 0: .*{outcome}"):
            checks.test_nccl_bf16_premul_sum_exact(broken, notes.append)
    refused = _run("nccl", 2, bf16_premul=_premul("refused", "PreMulSum Data type must be ... (not supported)"))
    with pytest.raises(pytest.skip.Exception, match="refuses bf16 PREMUL_SUM"):
        checks.test_nccl_bf16_premul_sum_exact(refused, notes.append)


def test_bf16_premul_sum_on_one_rank_is_a_named_skip_that_says_what_it_gave() -> None:
    notes: list[str] = []
    zeros = _run("nccl", 1, bf16_premul=_premul("all_zero", "bf16 PREMUL_SUM (x3): all 65536 elements zero"))
    with pytest.raises(pytest.skip.Exception, match=r"one rank: .*2\+ GPUs.*all 65536 elements zero"):
        checks.test_nccl_bf16_premul_sum_exact(zeros, notes.append)
    assert "rank 0: bf16 PREMUL_SUM (x3): all 65536 elements zero" in notes


@pytest.mark.parametrize(("factor", "outcome"), [(3.0, "exact"), (0.0, "all_zero"), (1.0, "unchanged"), (2.0, "wrong")])
def test_the_worker_reports_bf16_premul_sum_for_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factor: float, outcome: str
) -> None:
    """The worker's side on the CPU (gloo refuses PREMUL_SUM): one rank's all_reduce stood in for by a multiply, by 3
    (right), 0 (the defect), 1 (a collective that does nothing) or 2; the outcome reaches what the check reads."""
    from conformance.support.workloads import collectives

    def all_reduce(tensor: torch.Tensor, op: object = None, **kwargs: object) -> None:
        tensor.mul_(factor)

    monkeypatch.setattr(collectives, "_reduce_op", lambda op: op)
    monkeypatch.setattr(dist, "all_reduce", all_reduce)
    failures: list[str] = []
    job = DistJob(("collectives",), "nccl", 1, 0, str(tmp_path), 60.0)
    observed = collectives._bf16_premul_observation(0, job, torch.device("cpu"), 64, failures)
    assert observed["outcome"] == outcome
    assert failures == ([observed["note"]] if outcome == "unchanged" else [])  # did not run: fails on any ranks


def _all_reduce_raising(monkeypatch: pytest.MonkeyPatch, message: str) -> None:
    real = dist.all_reduce

    def all_reduce(tensor: torch.Tensor, op: object = dist.ReduceOp.SUM, **kwargs: object) -> object:
        if op == dist.ReduceOp.AVG:
            raise RuntimeError(message)
        return real(tensor, op=op, **kwargs)

    monkeypatch.setattr(dist, "all_reduce", all_reduce)


@pytest.mark.parametrize(
    ("message", "fails"),
    [
        ("Cannot use ReduceOp.AVG with Gloo", False),
        ("[../gloo/transport/tcp/pair.cc:534] Connection reset by peer", True),
    ],
)
def test_gloo_avg_error_is_a_note_only_when_documented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, message: str, fails: bool
) -> None:
    job = DistJob(("collectives",), "gloo", 1, 0, str(tmp_path), 60.0)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        _all_reduce_raising(monkeypatch, message)
        result = task_collectives(0, job, torch.device("cpu"))
    finally:
        dist.destroy_process_group()
    run = DistributedRun(2, "gloo", ({"collectives": result}, {"collectives": result}), 1.0)
    notes: list[str] = []
    if fails:
        assert result["unsupported"] == []
        assert f"fp32/avg raised RuntimeError: {message}" in result["reduction_mismatches"]
        with pytest.raises(AssertionError, match="Connection reset by peer"):
            checks.test_gloo_allreduce_exact(run, notes.append)
    else:
        assert len(result["unsupported"]) == 3  # fp32, fp16, bf16
        assert result["reduction_mismatches"] == []
        checks.test_gloo_allreduce_exact(run, notes.append)
        assert f"rank 0 gloo does not support fp32/avg: RuntimeError: {message}" in notes


def test_only_documented_refusals_count_as_unsupported() -> None:
    assert unsupported_op_error(RuntimeError("Cannot use ReduceOp.AVG with Gloo"))
    assert unsupported_op_error(TypeError("PreMulSum Data type must be half, float, or double"))
    assert not unsupported_op_error(RuntimeError("NCCL error: unhandled system error"))
    assert not unsupported_op_error(AttributeError("module 'torch.distributed' has no attribute 'all_reduce'"))


def _hooks_run(world_size: int, update_error: float, cross_rank: float) -> DistributedRun:
    result = {
        "update_error_vs_no_hook": {"fp16": update_error},
        "max_cross_rank_param_difference": {"none": cross_rank, "fp16": cross_rank},
        "unsupported": [],
    }
    return DistributedRun(world_size, "nccl", tuple({"ddp_hooks": result} for _ in range(world_size)), 1.0)


def test_one_rank_cross_rank_comparison_is_a_note_not_a_pass() -> None:
    notes: list[str] = []
    metrics: list[tuple[object, ...]] = []

    def record_metric(*args: object, **kwargs: object) -> None:
        metrics.append(args)

    checks.test_ddp_compression_hooks_match_plain_ddp_nccl(_hooks_run(1, 6.5e-5, 0.0), record_metric, notes.append)
    assert checks.ONE_RANK_CROSS_RANK in notes
    with pytest.raises(AssertionError, match="diverges from DDP without them"):  # the hook error stays gated
        checks.test_ddp_compression_hooks_match_plain_ddp_nccl(_hooks_run(1, 0.14, 0.0), record_metric, notes.append)
    with pytest.raises(AssertionError, match=r"differ across ranks.*nan"):  # two ranks: verified
        checks.check_hooks(_hooks_run(2, 6.5e-5, float("nan")), record_metric, notes.append)


def test_a_compile_that_compiled_nothing_fails_naming_torchdynamo_disable() -> None:
    notes: list[str] = []
    compiled = {"dynamo_unique_graphs": 1, "inductor_graphs": {"fxgraph_cache_miss": 2}}
    checks.check_compiled([compiled, compiled], notes.append)
    with pytest.raises(AssertionError, match="TORCHDYNAMO_DISABLE=1"):
        checks.check_compiled([compiled, {"dynamo_unique_graphs": 0, "inductor_graphs": {}}], notes.append)


def fake_pynvml(nvlink: dict[tuple[str, str], int] | None, raises: bool = False) -> types.SimpleNamespace:
    def p2p_status(first: str, second: str, index: int) -> int:
        assert index == 2
        if raises:
            raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")
        return (nvlink or {}).get((first, second), 0)

    fake = types.SimpleNamespace(NVML_P2P_CAPS_INDEX_NVLINK=2, NVML_P2P_STATUS_OK=0)
    if nvlink is not None:
        fake.nvmlDeviceGetP2PStatus = p2p_status
    return fake


def test_topology_from_nvml_answers() -> None:
    handles: list[object] = ["h0", "h1", "h2"]
    assert nvml.interconnect_from_nvml(fake_pynvml({}), handles)[0] == nvml.NVLINK  # status 0 (OK) for all pairs
    pcie = fake_pynvml({("h0", "h2"): 4})  # NVML_P2P_STATUS_NOT_SUPPORTED between GPUs 0 and 2
    assert nvml.interconnect_from_nvml(pcie, handles) == (
        nvml.PCIE,
        "no NVLink P2P between GPUs 0-2 (NVML): PCIe or host memory",
    )
    assert nvml.interconnect_from_nvml(fake_pynvml({}, raises=True), handles)[0] == nvml.UNKNOWN
    assert nvml.interconnect_from_nvml(fake_pynvml(None), handles)[0] == nvml.UNKNOWN  # an old pynvml
    assert nvml.interconnect_from_nvml(fake_pynvml({}), ["h0"])[0] == nvml.UNKNOWN


def test_topology_without_nvml_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvml, "_STATE", {"module": "ModuleNotFoundError: No module named 'pynvml'"})
    kind, how = nvml.interconnect([("abc", 0), ("def", 1)])
    assert kind == nvml.UNKNOWN
    assert "NVML unavailable (ModuleNotFoundError" in how


def test_busbw_floor_follows_the_topology() -> None:
    nvlink, pcie, unknown = busbw_gate("nvlink", "x"), busbw_gate("pcie", "x"), busbw_gate("unknown", "no NVML")
    assert nvlink.violation(330.0) is None  # 2x H100 NVLink
    assert nvlink.violation(8.0) is not None  # NCCL on sockets (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1)
    assert pcie.violation(10.0) is None  # PCIe Gen3 x16 P2P
    assert pcie.violation(3.0) is not None
    assert unknown.violation(3.0) is None
    assert "topology unknown (no NVML)" in unknown.why
    for gate in (nvlink, pcie, unknown):
        assert gate.violation(1e5) is not None  # an all_reduce that did no work: timed at ~0 s


def test_busbw_check_uses_the_topology_floor() -> None:
    run = _run("nccl", 2, busbw_gbps=8.0, busbw_message_bytes=256 * 2**20)
    metrics: dict[str, dict[str, object]] = {}

    def record_metric(name: str, value: float, unit: str, **fields: object) -> None:
        metrics[name] = {"value": value, **fields}

    with pytest.raises(AssertionError, match=r"8 is below 100 .*NVLink"):
        checks.check_busbw(run, record_metric, (nvml.NVLINK, "NVLink P2P between all 2 GPUs (NVML)"))
    assert metrics["nccl.busbw_gbps"]["bound"] == 100.0
    checks.check_busbw(run, record_metric, (nvml.PCIE, "no NVLink"))


def test_bus_bandwidth_formula() -> None:
    assert bus_bandwidth_gbps(10**9, 1.0, 2) == pytest.approx(1.0)
    assert bus_bandwidth_gbps(10**9, 0.5, 8) == pytest.approx(2.0 * 2 * 7 / 8)
    assert bus_bandwidth_gbps(10**9, 1.0, 1) == 0.0


@pytest.mark.parametrize("world_size", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("op", ["sum", "max", "avg"])
def test_allreduce_expectations_are_exact_in_bf16(world_size: int, op: str) -> None:
    expected = allreduce_expected(op, 64, world_size, torch.device("cpu"))
    if op != "avg" or world_size in (1, 2, 4, 8):
        assert torch.equal(expected.to(torch.bfloat16).float(), expected)
        assert torch.equal(expected.to(torch.float16).float(), expected)
    assert allreduce_inputs(0, 64, torch.device("cpu")).abs().max() <= 8
