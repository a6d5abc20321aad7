"""Train the same N steps from the same initial weights on the same batches, once per dtype."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch

from precision_check.contract import Workload
from precision_check.errors import PrecisionCheckError, describe_exception
from precision_check.measure import ActivationWatch, agreement, tf32, timing, zero_fraction
from precision_check.report import Compiled, Device, DtypeRun, Measurements, ScalerHistory, Timing, ZeroGrads

AMP_DTYPES: dict[str, torch.dtype | None] = {"fp32": None, "tf32": None, "fp16": torch.float16, "bf16": torch.bfloat16}
INITIAL_SCALE = 2.0**16  # GradScaler's default


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


Batch = tuple[tuple[Any, ...], Any]


def _backward(loss: torch.Tensor) -> None:
    loss.backward()


def _event() -> torch.cuda.Event:
    return torch.cuda.Event(enable_timing=True)


def _to(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device, non_blocking=True)
    if isinstance(value, tuple | list):
        return type(value)(_to(v, device) for v in value)
    return value


def get_batch(workload: Workload, step: int, device: str, seed: int) -> Batch:
    torch.manual_seed(seed + step)
    value = workload.batch(step)
    if not (isinstance(value, tuple | list) and len(value) == 2):
        raise PrecisionCheckError(
            f"batch({step}) returned a {type(value).__name__}, not a pair (inputs, target)",
            "make the batch function return (inputs, target); inputs a tensor or a tuple of tensors",
        )
    inputs, target = value
    args = tuple(inputs) if isinstance(inputs, tuple | list) else (inputs,)
    return _to(args, device), _to(target, device)


class _Trainer:
    """One dtype's training loop: autocast (fp16, bf16), GradScaler (fp16), IEEE or TF32 fp32."""

    def __init__(self, model: torch.nn.Module, workload: Workload, dtype: str, device: Device) -> None:
        self.model, self.workload, self.device = model, workload, device
        self.amp = AMP_DTYPES[dtype]
        self.optimizer = workload.optimizer(model.parameters())
        self.scaler = torch.amp.GradScaler(device.kind, init_scale=INITIAL_SCALE) if dtype == "fp16" else None

    def loss(self, model: Callable[..., Any], batch: Batch) -> torch.Tensor:
        with torch.autocast(self.device.kind, dtype=self.amp or torch.float32, enabled=self.amp is not None):
            loss = self.workload.loss(model(*batch[0]), batch[1])
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise PrecisionCheckError(
                f"the loss function returned {type(loss).__name__}"
                + (f" of shape {tuple(loss.shape)}" if isinstance(loss, torch.Tensor) else "")
                + ", not a scalar tensor",
                "return a single number as a tensor, e.g. torch.nn.functional.cross_entropy(output, target)",
            )
        return loss

    def step(self, model: Callable[..., Any], batch: Batch) -> torch.Tensor:
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss(model, batch)
        if self.scaler is None:
            _backward(loss)
            self.optimizer.step()
        else:
            _backward(self.scaler.scale(loss))
            self.scaler.step(self.optimizer)
            self.scaler.update()
        return loss.detach()

    def zero_grads(self, batch: Batch) -> ZeroGrads:
        fractions = []
        for amp, factor in ((None, 1.0), (torch.float16, 1.0), (torch.float16, INITIAL_SCALE)):
            self.model.zero_grad(set_to_none=True)
            with torch.autocast(self.device.kind, dtype=amp or torch.float32, enabled=amp is not None):
                loss = self.workload.loss(self.model(*batch[0]), batch[1])
            _backward(loss.float() * factor)
            fractions.append(zero_fraction(self.model))
        self.model.zero_grad(set_to_none=True)
        return ZeroGrads(fractions[0], fractions[1], fractions[2], INITIAL_SCALE)

    def time(self, model: Callable[..., Any], batches: list[Batch], warmup: int, count: int) -> Timing:
        cuda = self.device.kind == "cuda"
        for i in range(warmup):
            self.step(model, batches[i % len(batches)])
        samples: list[float] = []
        events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
        if cuda:
            torch.cuda.synchronize()
        for i in range(count):
            batch = batches[i % len(batches)]
            if cuda:
                start, end = _event(), _event()
                start.record()
                self.step(model, batch)
                end.record()
                events.append((start, end))
            else:
                began = time.perf_counter()
                self.step(model, batch).item()
                samples.append((time.perf_counter() - began) * 1e3)
        if cuda:
            torch.cuda.synchronize()
            samples = [start.elapsed_time(end) for start, end in events]
        return timing(samples, "cuda-events" if cuda else "perf_counter")


def _run_dtype(workload: Workload, initial: dict[str, Any], dtype: str, options: Options, device: Device) -> DtypeRun:
    model, kind = workload.model, device.kind
    model.load_state_dict(initial)
    model.train()
    trainer = _Trainer(model, workload, dtype, device)
    step = 0
    try:
        zero_grads = trainer.zero_grads(get_batch(workload, 0, kind, options.seed)) if dtype == "fp16" else None
        model.load_state_dict(initial)
        torch.manual_seed(options.seed)
        watch = ActivationWatch(model, nonfinite_only=dtype == "fp16")
        losses: list[float | None] = []
        scales: list[float] = []
        skipped: list[int] = []
        for step in range(options.steps):
            before = trainer.scaler.get_scale() if trainer.scaler else 0.0
            loss = trainer.step(model, get_batch(workload, step, kind, options.seed))
            watch.end_step(step)
            value = float(loss.float().item())
            losses.append(value if math.isfinite(value) else None)
            if trainer.scaler is not None:
                scales.append(trainer.scaler.get_scale())
                if scales[-1] < before:
                    skipped.append(step)
        watch.remove()
        batches = [get_batch(workload, s, kind, options.seed) for s in range(min(options.steps, 4))]
        if kind == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        eager = trainer.time(model, batches, options.warmup, options.timed_steps)
        peak = torch.cuda.max_memory_allocated() / 2**20 if kind == "cuda" else None
        compiled = _compiled(trainer, model, batches, options) if options.compile else None
    except PrecisionCheckError:
        raise
    except Exception as exc:
        raise _UserCodeError(step, exc) from exc
    return DtypeRun(
        dtype=dtype,
        losses=tuple(losses),
        nonfinite_steps=tuple(i for i, v in enumerate(losses) if v is None),
        overflows=tuple(watch.overflows),
        scaler=ScalerHistory(tuple(scales), tuple(skipped)) if trainer.scaler is not None else None,
        zero_grads=zero_grads,
        timing=eager,
        peak_mem_mib=peak,
        compiled=compiled,
    )


def _compiled(trainer: _Trainer, model: torch.nn.Module, batches: list[Batch], options: Options) -> Compiled:
    compiled = torch.compile(model)
    began = time.perf_counter()
    trainer.step(compiled, batches[0]).item()
    compile_s = time.perf_counter() - began
    return Compiled(compile_s, trainer.time(compiled, batches, max(options.warmup, 3), options.timed_steps))


def run_all(workload: Workload, options: Options, device: Device, notes: list[str]) -> Measurements:
    """Every dtype from the same initial weights (a deep copy of the state_dict) and the same batches."""
    model = workload.model.to(device.kind)
    initial = copy.deepcopy(model.state_dict())
    runs: list[DtypeRun] = []
    for dtype in options.dtypes:
        try:
            with tf32(dtype == "tf32"):
                runs.append(_run_dtype(workload, initial, dtype, options, device))
        except _UserCodeError as err:
            raise PrecisionCheckError(
                f"the model raised in step {err.step + 1} under {dtype}: {describe_exception(err.exc)}",
                "fix the model, batch or loss so that one training step runs"
                + ("" if dtype == "fp32" else f", or leave {dtype} out of --dtypes"),
            ) from err
    reference = runs[0].losses
    runs = [r if r.dtype == "fp32" else replace(r, **_agreement(r.losses, reference)) for r in runs]
    return Measurements(device, options.steps, tuple(runs), options.compile, tuple(notes))


def _agreement(losses: tuple[float | None, ...], reference: tuple[float | None, ...]) -> dict[str, Any]:
    final, worst, worst_step = agreement(losses, reference)
    return {"rel_diff_final": final, "rel_diff_max": worst, "rel_diff_max_step": worst_step}
