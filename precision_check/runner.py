"""Train the same N steps from the same initial weights on the same batches, once per dtype, and once
more in fp32 from the initial weights rounded once to bf16: the control that measures fp32's own
noise floor on this model (see agreement.py)."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from precision_check.agreement import agreement, listed, noise_floor, reference_for
from precision_check.bad_input import PrecisionCheckError, describe_exception
from precision_check.check_report import Compiled, Device, DtypeRun, Measurements, NoiseFloor, ScalerHistory
from precision_check.measure import ActivationWatch, GradWatch, tf32
from precision_check.trainer import Batch, Batches, Trainer
from precision_check.workload import Workload

Progress = Callable[[str], None] | None


@dataclass(frozen=True)
class Options:
    steps: int = 50
    dtypes: tuple[str, ...] = ("fp32", "fp16", "bf16")
    compile: bool = False
    warmup: int = 3
    timed_steps: int = 20
    seed: int = 0


class _UserCodeError(Exception):
    """The model, batch or loss raised; carries the step it raised in."""

    def __init__(self, step: int, exc: Exception) -> None:
        super().__init__(str(exc))
        self.step, self.exc = step, exc


@dataclass
class _Curve:
    losses: list[float | None]
    scales: list[float]
    skipped: list[int]


def _train(
    trainer: Trainer,
    options: Options,
    batches: Batches,
    watch: ActivationWatch | None,
    curve: _Curve,
    *,
    skip: frozenset[int] = frozenset(),
) -> None:
    """options.steps training steps, with no optimizer step at the steps in `skip`; `curve` fills as they
    go (so a raising step keeps its number)."""
    torch.manual_seed(options.seed)
    for step in range(options.steps):
        before = trainer.scaler.get_scale() if trainer.scaler else 0.0
        trainer.at_step = step
        try:
            loss = trainer.step(trainer.model, batches.get(step), update=step not in skip)
        except PrecisionCheckError:
            raise
        except Exception as exc:
            raise _UserCodeError(step, exc) from exc
        if watch is not None:
            watch.end_step(step)
        value = float(loss.float().item())
        curve.losses.append(value if math.isfinite(value) else None)
        if trainer.scaler is not None:
            curve.scales.append(trainer.scaler.get_scale())
            if curve.scales[-1] < before:
                curve.skipped.append(step)


def _run_dtype(
    workload: Workload, initial: dict[str, Any], dtype: str, options: Options, device: Device, *, batches: Batches
) -> DtypeRun:
    model, kind = workload.model, device.kind
    model.train()
    trainer = Trainer(model, workload, dtype, device)
    curve = _Curve([], [], [])
    try:
        zero_grads = trainer.zero_grads(batches.get(0)) if dtype == "fp16" else None
        model.load_state_dict(initial)
        watch = ActivationWatch(model, nonfinite_only=dtype == "fp16")
        trainer.watch, trainer.grads = watch, GradWatch(model)
        _train(trainer, options, batches, watch, curve)
        watch.remove()
        zero_fractions, grad_faults = trainer.grads.finish(options.steps), tuple(trainer.grads.faults)
        trainer.watch = trainer.grads = None
        timed = [batches.get(s) for s in range(min(options.steps, 4))]
        if kind == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        eager = trainer.time(model, timed, options.warmup, options.timed_steps)
        peak = torch.cuda.max_memory_allocated() / 2**20 if kind == "cuda" else None
        compiled = _compiled(trainer, model, timed, options) if options.compile else None
    except (PrecisionCheckError, _UserCodeError):
        raise
    except Exception as exc:
        raise _UserCodeError(len(curve.losses), exc) from exc
    return DtypeRun(
        dtype=dtype,
        losses=tuple(curve.losses),
        nonfinite_steps=tuple(i for i, v in enumerate(curve.losses) if v is None),
        overflows=tuple(watch.overflows),
        scaler=ScalerHistory(tuple(curve.scales), tuple(curve.skipped)) if trainer.scaler is not None else None,
        zero_grads=zero_grads,
        timing=eager,
        peak_mem_mib=peak,
        compiled=compiled,
        zero_grad_fractions=zero_fractions,
        nonfinite_grads=grad_faults,
    )


def rounded_once(state: dict[str, Any]) -> dict[str, Any]:
    """The state_dict with every floating-point tensor rounded to bf16 and back: a 2^-9 relative nudge."""
    return {
        key: value.to(torch.bfloat16).to(value.dtype)
        if isinstance(value, torch.Tensor) and value.is_floating_point()
        else value
        for key, value in state.items()
    }


def _fp32_again(
    workload: Workload,
    state: dict[str, Any],
    options: Options,
    batches: Batches,
    *,
    device: Device,
    skip: frozenset[int] = frozenset(),
) -> list[float | None]:
    """fp32 (IEEE) again from `state`, on the same batches, with no optimizer step at the steps in `skip`:
    no hooks, no timing. From the initial weights rounded once, it is the control (the noise floor);
    from the initial weights themselves, skipping a run's GradScaler-skipped steps, it is what that run
    is compared with, so that a skipped update is not taken for drift."""
    workload.model.load_state_dict(state)
    workload.model.train()
    curve = _Curve([], [], [])
    with tf32(False):
        _train(Trainer(workload.model, workload, "fp32", device), options, batches, None, curve, skip=skip)
    return curve.losses


def _with_same_skips(
    workload: Workload,
    initial: dict[str, Any],
    options: Options,
    batches: Batches,
    run: DtypeRun,
    *,
    device: Device,
    say: Callable[[str], None],
) -> DtypeRun:
    """`run` with its scaler's fp32_same_skips measured, when GradScaler skipped any step and the run
    ended finite (a run that ends non-finite is compared with nothing)."""
    if run.scaler is None or not run.scaler.skipped_steps or run.final_loss is None:
        return run
    began = time.perf_counter()
    skipped = run.scaler.skipped_steps
    try:
        losses = _fp32_again(workload, initial, options, batches, device=device, skip=frozenset(skipped))
    except _UserCodeError as err:
        raise _raised(err, "fp32", f" (the run skipping {run.dtype}'s skipped steps)") from err
    say(f"[fp32 skipping {run.dtype}'s skipped steps {listed(skipped)}] done in {time.perf_counter() - began:.1f} s")
    return replace(run, scaler=replace(run.scaler, fp32_same_skips=tuple(losses)))


def _compiled(trainer: Trainer, model: torch.nn.Module, batches: list[Batch], options: Options) -> Compiled:
    compiled = torch.compile(model)
    began = time.perf_counter()
    trainer.step(compiled, batches[0]).item()
    compile_s = time.perf_counter() - began
    return Compiled(compile_s, trainer.time(compiled, batches, max(options.warmup, 3), options.timed_steps))


def _raised(err: _UserCodeError, dtype: str, what: str = "") -> PrecisionCheckError:
    return PrecisionCheckError(
        f"the model raised in step {err.step + 1} under {dtype}{what}: {describe_exception(err.exc)}",
        "fix the model, batch or loss so that one training step runs"
        + ("" if dtype == "fp32" else f", or leave {dtype} out of --dtypes"),
    )


def run_all(
    workload: Workload, options: Options, device: Device, notes: list[str], progress: Progress = None
) -> Measurements:
    """Every dtype from the same initial weights (a deep copy of the state_dict) and the same batches
    (made once, see Batches); with any dtype besides fp32, the fp32 control too. `progress` gets a
    line as each run starts and ends."""
    model = workload.model.to(device.kind)
    initial = copy.deepcopy(model.state_dict())
    batches = Batches(workload, device.kind, options.seed)
    say = progress or (lambda line: None)
    runs: list[DtypeRun] = []
    control: list[float | None] | None = None
    for dtype in options.dtypes:
        began = time.perf_counter()
        say(
            f"[{dtype}] {options.steps} steps, then {options.timed_steps} timed"
            + (" (and compiled)" if options.compile else "")
        )
        try:
            with tf32(dtype == "tf32"):
                runs.append(_run_dtype(workload, initial, dtype, options, device, batches=batches))
        except _UserCodeError as err:
            raise _raised(err, dtype) from err
        say(f"[{dtype}] done in {time.perf_counter() - began:.1f} s (batches made so far: {batches.made})")
        if dtype == "fp32" and len(options.dtypes) > 1:
            began = time.perf_counter()
            try:
                control = _fp32_again(workload, rounded_once(initial), options, batches, device=device)
            except _UserCodeError as err:
                raise _raised(err, "fp32", " (the control run, from weights rounded to bf16)") from err
            say(f"[fp32 control] (weights rounded once to bf16) done in {time.perf_counter() - began:.1f} s")
    if runs[0].dtype == "fp32":
        runs[1:] = [_with_same_skips(workload, initial, options, batches, r, device=device, say=say) for r in runs[1:]]
    runs = [r if r.dtype == "fp32" else replace(r, **_agreement(r.losses, reference_for(r, runs[0]))) for r in runs]
    floor: NoiseFloor | None = None if control is None else noise_floor(control, runs[0].losses)
    return Measurements(device, options.steps, tuple(runs), options.compile, tuple(notes), floor)


def _agreement(losses: Sequence[float | None], reference: Sequence[float | None]) -> dict[str, Any]:
    final, worst, worst_step = agreement(losses, reference)
    return {"rel_diff_final": final, "rel_diff_max": worst, "rel_diff_max_step": worst_step}
