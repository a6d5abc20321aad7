"""One dtype's training step: autocast (fp16, bf16), GradScaler (fp16), IEEE or TF32 fp32; gradient
clipping when the workload asks; step timing; zero gradients with and without loss scaling."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from precision_check.bad_input import PrecisionCheckError
from precision_check.check_report import Device, Timing, ZeroGrads
from precision_check.measure import ActivationWatch, GradWatch, timing, zero_fraction
from precision_check.workload import Workload

AMP_DTYPES: dict[str, torch.dtype | None] = {"fp32": None, "tf32": None, "fp16": torch.float16, "bf16": torch.bfloat16}
INITIAL_SCALE = 2.0**16  # GradScaler's default


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


CACHE_BUDGET_BYTES = 2 * 2**30  # batches kept for the next dtype's run, at most (the rest are made again)
STEP_SEED_OFFSET = 1_000_003  # the step's own RNG seed: seed + offset + step (the batch's is seed + step)


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, tuple | list):
        return type(value)(_clone(v) for v in value)
    return value


def _nbytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return int(value.nelement() * value.element_size())
    if isinstance(value, tuple | list):
        return sum(_nbytes(v) for v in value)
    return 0


class Batches:
    """Each step's batch, made once by the workload's batch function (seeded per step) and handed to
    every dtype's run: a slow batch function is paid once, not once per dtype, and every run sees the
    same data even when the function draws from another RNG. Each caller gets a copy, so a model that
    changes its inputs in place cannot change them for the next run. Up to CACHE_BUDGET_BYTES are
    kept; past that, a step's batch is made again (seeded the same way)."""

    def __init__(self, workload: Workload, device: str, seed: int, budget: int = CACHE_BUDGET_BYTES) -> None:
        self.workload, self.device, self.seed, self.budget = workload, device, seed, budget
        self._kept: dict[int, Any] = {}
        self._bytes = 0
        self.made = 0  # calls of the workload's batch function

    def get(self, step: int) -> Batch:
        """The batch of `step`; then the RNG is seeded for the step itself (dropout and the like), the
        same way whether the batch was made now or kept, so every dtype's step `step` draws the same."""
        batch: Batch
        if step in self._kept:
            batch = _clone(self._kept[step])
        else:
            torch.manual_seed(self.seed + step)
            batch = get_batch(self.workload, step, self.device)
            self.made += 1
            size = _nbytes(batch)
            if self._bytes + size <= self.budget:
                self._kept[step] = _clone(batch)
                self._bytes += size
        torch.manual_seed(self.seed + STEP_SEED_OFFSET + step)
        return batch


def get_batch(workload: Workload, step: int, device: str) -> Batch:
    """The workload's batch for `step`, checked and moved to `device` (the caller seeds the RNG)."""
    value = workload.batch(step)
    if not (isinstance(value, tuple | list) and len(value) == 2):
        raise PrecisionCheckError(
            f"batch({step}) returned a {type(value).__name__}, not a pair (inputs, target)",
            "make the batch function return (inputs, target); inputs a tensor or a tuple of tensors",
        )
    inputs, target = value
    args = tuple(inputs) if isinstance(inputs, tuple | list) else (inputs,)
    return _to(args, device), _to(target, device)


class Trainer:
    """One dtype's training loop: autocast (fp16, bf16), GradScaler (fp16), IEEE or TF32 fp32."""

    def __init__(self, model: torch.nn.Module, workload: Workload, dtype: str, device: Device) -> None:
        self.model, self.workload, self.device = model, workload, device
        self.amp = AMP_DTYPES[dtype]
        self.optimizer = workload.optimizer(model.parameters())
        self.scaler = torch.amp.GradScaler(device.kind, init_scale=INITIAL_SCALE) if dtype == "fp16" else None
        self.watch: ActivationWatch | None = None  # set while the measured steps run (not while timing)
        self.grads: GradWatch | None = None
        self.at_step = 0  # the measured step being run, for the watches

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
        if self.watch is not None:
            self.watch.observe_loss(loss)
        return loss

    def step(self, model: Callable[..., Any], batch: Batch, *, update: bool = True) -> torch.Tensor:
        """One training step; with update=False only the forward pass (in train mode, so batch-norm
        statistics move as in a step GradScaler skips) and no optimizer step."""
        self.optimizer.zero_grad(set_to_none=True)
        if not update:
            with torch.no_grad():
                return self.loss(model, batch).detach()
        loss = self.loss(model, batch)
        clip = self.workload.clip_grad_norm
        if self.scaler is None:
            _backward(loss)
            self._after_backward()
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip)
            self.optimizer.step()
        else:
            _backward(self.scaler.scale(loss))
            self._after_backward()
            if clip is not None:
                self.scaler.unscale_(self.optimizer)  # clip the true gradients, not the scaled ones
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
        return loss.detach()

    def _after_backward(self) -> None:
        if self.grads is not None:
            self.grads.after_backward(self.at_step)

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
