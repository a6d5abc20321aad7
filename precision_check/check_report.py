"""The precision-check report: frozen dataclasses, and the JSON document back in.

JSON form: ``{"schema": "pytorch-cuda/precision-check", "version": 5, ...}``; its JSON Schema is
``report.schema.json`` beside this file, which says what each version added. precision_check/display.py writes
it, with the lines precision-check judged (``display``, version 5), so that a page on the host shows them without
judging again (pytorch_cuda_contract/precision_check_file.py reads them there). Versions 1 to 4 still read back
here (an old verdict's kind reads as ``""``); ``python -m precision_check.upgrade`` rewrites one as version 5.
Non-finite numbers never reach JSON: a non-finite loss is ``null`` (its step is listed in ``nonfinite_steps``), a
non-finite activation's ``max_abs`` is ``null``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from pytorch_cuda_contract import precision_check_file

SCHEMA: Final = precision_check_file.SCHEMA
VERSION: Final = precision_check_file.VERSION
READABLE_VERSIONS: Final = precision_check_file.KNOWN_VERSIONS
FP16_MAX = 65504.0


@dataclass(frozen=True)
class Overflow:
    """A module output beyond fp16's range (|x| > 65504, or non-finite: max_abs None)."""

    module: str
    step: int
    max_abs: float | None


@dataclass(frozen=True)
class GradFault:
    """A parameter whose gradient was non-finite (inf or nan) after a backward pass: the first step of each."""

    parameter: str
    step: int


@dataclass(frozen=True)
class ScalerHistory:
    scale: tuple[float, ...]  # the GradScaler's scale after each step
    skipped_steps: tuple[int, ...]  # steps whose optimizer step the scaler skipped (inf/nan grads)
    # fp32 trained again with those same optimizer steps skipped: the curve this run is judged against,
    # so that an update GradScaler skipped (as it does while it finds its scale) is not taken for drift.
    # None when no step was skipped (or no fp32 ran, or a report older than version 3).
    fp32_same_skips: tuple[float | None, ...] | None = None


@dataclass(frozen=True)
class ZeroGrads:
    """Fraction of gradient elements that are exactly zero, at the initial weights, on the first batch."""

    fp32: float
    fp16_unscaled: float  # fp16 autocast, plain backward(): underflow shows here
    fp16_scaled: float  # fp16 autocast, loss multiplied by `scale` (GradScaler's initial scale)
    scale: float


@dataclass(frozen=True)
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    samples: int
    clock: str  # "cuda-events" or "perf_counter"


@dataclass(frozen=True)
class Compiled:
    compile_s: float  # the first (compiling) step's wall time
    timing: Timing


@dataclass(frozen=True)
class DtypeRun:
    dtype: str  # fp32 | tf32 | fp16 | bf16
    losses: tuple[float | None, ...]
    nonfinite_steps: tuple[int, ...] = ()
    rel_diff_final: float | None = None  # |loss - fp32 loss| / |fp32 loss| at the last step
    rel_diff_max: float | None = None  # the largest such difference along the way
    rel_diff_max_step: int | None = None
    overflows: tuple[Overflow, ...] = ()  # first overflow of each module, in order
    scaler: ScalerHistory | None = None
    zero_grads: ZeroGrads | None = None
    timing: Timing | None = None
    peak_mem_mib: float | None = None
    compiled: Compiled | None = None
    # per step: the fraction of gradient elements exactly zero after backward (fp16: scaled); None: no backward
    zero_grad_fractions: tuple[float | None, ...] = ()
    nonfinite_grads: tuple[GradFault, ...] = ()  # first non-finite gradient of each parameter, in order

    @property
    def final_loss(self) -> float | None:
        return self.losses[-1] if self.losses else None


CONTROL_PERTURBATION = "a second fp32 run from the initial weights rounded once to bf16 (2^-9 relative), same batches"


@dataclass(frozen=True)
class NoiseFloor:
    """fp32's own sensitivity on this model: a second fp32 run (the control) whose initial weights differ by
    one rounding, against the fp32 reference. Steady models stay far below 1%; chaotic ones do not."""

    losses: tuple[float | None, ...]
    nonfinite_steps: tuple[int, ...] = ()
    rel_diff_final: float | None = None  # |control - fp32| / |fp32| at the last step
    rel_diff_max: float | None = None  # the largest along the way: the floor the verdict uses
    rel_diff_max_step: int | None = None
    perturbation: str = CONTROL_PERTURBATION


@dataclass(frozen=True)
class Device:
    kind: str  # "cuda" | "cpu"
    name: str
    compute_capability: str | None = None  # "9.0"
    bf16_native: bool | None = None  # None on the CPU
    torch: str = ""
    cuda: str | None = None


@dataclass(frozen=True)
class Measurements:
    """What the runner measured: everything the verdict reads."""

    device: Device
    steps: int
    runs: tuple[DtypeRun, ...]
    compile: bool = False
    notes: tuple[str, ...] = ()
    noise_floor: NoiseFloor | None = None  # None when only fp32 ran (or a version 1 report)

    def run(self, dtype: str) -> DtypeRun | None:
        return next((r for r in self.runs if r.dtype == dtype), None)


@dataclass(frozen=True)
class Verdict:
    dtype: str  # the recommended dtype (on the CPU: the one safe in numerics; the CPU gives no speed evidence)
    headline: str  # one line, e.g. "bf16: 2.1x faster than fp32, 38% less memory, final loss within 0.4%"
    reasons: tuple[str, ...] = ()
    numbers: dict[str, float | str | None] = field(default_factory=dict)
    kind: str = ""  # one of VERDICT_KINDS (docs/precision-check.md); "" in reports before version 4


# What kind of answer the verdict is, one line each: the contract's, which the host's page shows too.
VERDICT_KIND_MEANING: Final = precision_check_file.VERDICT_KIND_MEANING
VERDICT_KINDS: Final = tuple(VERDICT_KIND_MEANING)


@dataclass(frozen=True)
class Report:
    target: str
    created_at: str
    measurements: Measurements
    verdict: Verdict


def as_document(report: Report) -> dict[str, Any]:
    """The report's measurements and verdict as a JSON document (display.py adds the judged lines and writes it)."""
    m = report.measurements
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "version": VERSION,
        "target": report.target,
        "created_at": report.created_at,
        "steps": m.steps,
        "compile": m.compile,
        "device": asdict(m.device),
        "notes": list(m.notes),
        "runs": {run.dtype: asdict(run) | {"final_loss": run.final_loss} for run in m.runs},
        "noise_floor": None if m.noise_floor is None else asdict(m.noise_floor),
        "verdict": asdict(report.verdict),
    }
    return doc


def _timing(d: dict[str, Any] | None) -> Timing | None:
    return None if d is None else Timing(**d)


def _run(d: dict[str, Any]) -> DtypeRun:
    scaler, zero, compiled = d.get("scaler"), d.get("zero_grads"), d.get("compiled")
    return DtypeRun(
        dtype=d["dtype"],
        losses=tuple(d["losses"]),
        nonfinite_steps=tuple(d.get("nonfinite_steps", ())),
        rel_diff_final=d.get("rel_diff_final"),
        rel_diff_max=d.get("rel_diff_max"),
        rel_diff_max_step=d.get("rel_diff_max_step"),
        overflows=tuple(Overflow(**o) for o in d.get("overflows", ())),
        scaler=None if scaler is None else _scaler(scaler),
        zero_grads=None if zero is None else ZeroGrads(**zero),
        timing=_timing(d.get("timing")),
        peak_mem_mib=d.get("peak_mem_mib"),
        compiled=None if compiled is None else Compiled(compiled["compile_s"], Timing(**compiled["timing"])),
        zero_grad_fractions=tuple(d.get("zero_grad_fractions", ())),
        nonfinite_grads=tuple(GradFault(**g) for g in d.get("nonfinite_grads", ())),
    )


def _scaler(d: dict[str, Any]) -> ScalerHistory:
    same_skips = d.get("fp32_same_skips")
    return ScalerHistory(
        tuple(d["scale"]), tuple(d["skipped_steps"]), None if same_skips is None else tuple(same_skips)
    )


def _noise_floor(d: dict[str, Any] | None) -> NoiseFloor | None:
    if d is None:
        return None
    return NoiseFloor(
        losses=tuple(d["losses"]),
        nonfinite_steps=tuple(d.get("nonfinite_steps", ())),
        rel_diff_final=d.get("rel_diff_final"),
        rel_diff_max=d.get("rel_diff_max"),
        rel_diff_max_step=d.get("rel_diff_max_step"),
        perturbation=d.get("perturbation", CONTROL_PERTURBATION),
    )


def measurements_from_dict(doc: dict[str, Any]) -> Measurements:
    """Read back the measurements of a report (e.g. to recompute or unit-test a verdict)."""
    if doc.get("schema") != SCHEMA or doc.get("version") not in READABLE_VERSIONS:
        raise ValueError(f"not a {SCHEMA} document of version {' or '.join(map(str, READABLE_VERSIONS))}")
    return Measurements(
        device=Device(**doc["device"]),
        steps=doc["steps"],
        runs=tuple(_run(r) for r in doc["runs"].values()),
        compile=doc.get("compile", False),
        notes=tuple(doc.get("notes", ())),
        noise_floor=_noise_floor(doc.get("noise_floor")),
    )


def report_from_json(text: str) -> Report:
    doc = json.loads(text)
    v = doc["verdict"]
    reasons, numbers = tuple(v.get("reasons", ())), dict(v.get("numbers", {}))
    verdict = Verdict(v["dtype"], v["headline"], reasons, numbers, v.get("kind", ""))
    return Report(doc["target"], doc["created_at"], measurements_from_dict(doc), verdict)
