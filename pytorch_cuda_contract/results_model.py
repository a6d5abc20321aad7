"""Frozen dataclasses for a parsed results file, and tolerant scalar coercion. Standard library only."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pytorch_cuda_contract.carried_stack import RunStack
from pytorch_cuda_contract.gpu import ComputeCapability


def mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def listing(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: object) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value)


def as_float(value: object) -> float | None:
    """A number, or the strings "nan"/"inf"/"-inf" the writer uses for non-finite values."""
    if value is None:  # the common cases first: a results file holds about 250 metrics, most fields absent
        return None
    if type(value) is float:
        return value
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def as_int(value: object) -> int | None:
    number = as_float(value)
    if number is None or not math.isfinite(number):
        return None
    return int(number)


@dataclass(frozen=True)
class Clocks:
    sm_mhz: int | None
    mem_mhz: int | None
    power_limit_w: float | None
    throttle_reasons: tuple[str, ...]


@dataclass(frozen=True)
class Metric:
    """One measured value. ``value`` is a float (nan/inf included) or a string (e.g. a backend name)."""

    name: str
    value: float | str | None
    unit: str
    test: str | None = None
    min: float | None = None
    median: float | None = None
    max: float | None = None
    samples: int | None = None
    peak: float | None = None
    bound: float | None = None
    bound_kind: str | None = None
    device_index: int | None = None
    device_name: str | None = None
    clocks: Clocks | None = None
    contradicts: str | None = None
    ceiling: float | None = None  # a second, upper limit next to a ``min`` bound
    informational: bool = False  # recorded, not gated (schema-2 files before the flag: no bound)
    rel_spread: float | None = None  # (max - min) / median over the repetitions (metrics.spread)
    rel_iqr: float | None = None  # interquartile range / median over the repetitions
    rel_error: float | None = None  # the median's relative standard error when the repetitions stopped (harness 2)
    stopped: str | None = None  # why the repetitions stopped: results_format.STOPPED (harness 2)

    @property
    def number(self) -> float | None:
        """The value as a finite float, or None (missing, non-finite or a string)."""
        if isinstance(self.value, float) and math.isfinite(self.value):
            return self.value
        return None


# The fields of a metric's object read as a number or as text; an absent one is None (Metric's default).
_FLOATS: Final = frozenset({"min", "median", "max", "peak", "bound", "ceiling", "rel_spread", "rel_iqr", "rel_error"})
_TEXTS: Final = frozenset({"bound_kind", "contradicts", "stopped"})


def parse_metric(name: str, raw: Mapping[str, Any], test: str | None) -> Metric:
    """One metric's object. A results file holds hundreds, each with a few of Metric's fields: only the keys present
    are read (benchmarks/results_parse.py), so an absent field keeps its default."""
    fields: dict[str, Any] = {}
    for key, item in raw.items():
        if item is None:
            continue
        if key in _FLOATS:
            fields[key] = item if type(item) is float else as_float(item)
        elif key in _TEXTS:
            fields[key] = as_str(item)
        elif key == "samples":
            fields[key] = as_int(item)
    original = raw.get("value")
    number = original if type(original) is float else as_float(original)
    device = raw.get("device")
    if isinstance(device, Mapping):
        fields["device_index"] = as_int(device.get("index"))
        fields["device_name"] = as_str(device.get("name"))
    clocks_raw = raw.get("clocks")
    if isinstance(clocks_raw, Mapping):
        reasons = clocks_raw.get("throttle_reasons")
        fields["clocks"] = Clocks(
            sm_mhz=as_int(clocks_raw.get("sm_mhz")),
            mem_mhz=as_int(clocks_raw.get("mem_mhz")),
            power_limit_w=as_float(clocks_raw.get("power_limit_w")),
            throttle_reasons=tuple(str(r) for r in reasons) if isinstance(reasons, list) else (),
        )
    return Metric(
        name,
        number if number is not None else as_str(original),
        as_str(raw.get("unit")) or "",
        test,
        informational=raw.get("informational") is True or (raw.get("bound") is None and raw.get("ceiling") is None),
        **fields,
    )


@dataclass(frozen=True)
class TestResult:
    nodeid: str
    outcome: str  # passed | failed | skipped | not_run | not_judged | unknown
    phase: str | None
    markers: tuple[str, ...]
    duration_s: float | None
    message: str | None
    metrics: Mapping[str, Metric]
    notes: tuple[str, ...]
    informational: str | None = None  # why a check marked informational gates nothing (None: a gated check)

    @property
    def name(self) -> str:
        """The test function name with its parameters (``test_gemm_throughput[fp16]``)."""
        return self.nodeid.split("::")[-1]


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    compute_capability: str | None
    memory_bytes: int | None
    sm_count: int | None
    driver: str | None
    cuda_driver_version: str | None
    uuid: str | None

    @property
    def cc(self) -> ComputeCapability | None:
        return ComputeCapability.parse(self.compute_capability)


@dataclass(frozen=True)
class DtypeVerdict:
    dtype: str
    verdict: str  # native | emulated | unsupported
    reason: str | None
    device_index: int | None


@dataclass(frozen=True)
class ImageInfo:
    digest: str | None
    revision: str | None
    ref: str | None


FAILED_OUTCOMES = ("failed", "error")


@dataclass(frozen=True)
class ConformanceResults:
    source: str
    schema: int
    started_at: str | None
    wall_time_s: float | None
    argv: tuple[str, ...]
    markexpr: str | None
    exit_status: int | None
    environment: Mapping[str, Any]
    gpus: tuple[Gpu, ...]
    manifest: Mapping[str, Any]
    image: ImageInfo
    suite_digest: str | None
    totals: Mapping[str, int]
    tests: Mapping[str, TestResult]
    measurements: Mapping[str, Metric]
    dtypes: Mapping[str, DtypeVerdict]
    missing: tuple[str, ...]
    stack: RunStack  # which stack the run was on ("stack"; for a file written before runs named it, inferred)
    harness: int = 1  # the timing harness that measured it (results_format.HARNESS_VERSION; absent: FIRST_HARNESS)

    def counts(self) -> dict[str, int]:
        """Outcome -> number of tests, counted from the tests themselves."""
        counts: dict[str, int] = {}
        for test in self.tests.values():
            counts[test.outcome] = counts.get(test.outcome, 0) + 1
        return counts

    @property
    def complete(self) -> bool:
        """Every selected test ran and none failed (deselected tests, "not_run", and checks not judged on a carried
        stack, "not_judged", do not count against it)."""
        counts = self.counts()
        failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("unknown", 0)
        return bool(self.tests) and not failed and self.exit_status in (None, 0)

    def failures(self, limit: int = 300) -> tuple[str, ...]:
        return tuple(
            f"{t.nodeid}: {(t.message or '')[:limit]}" for t in self.tests.values() if t.outcome in FAILED_OUTCOMES
        )

    def outcomes(self) -> dict[str, str]:
        """Test function name (parameters kept) -> outcome."""
        return {t.name: t.outcome for t in self.tests.values()}

    def measurement(self, name: str) -> Metric | None:
        return self.measurements.get(name)

    def number(self, name: str) -> float | None:
        metric = self.measurements.get(name)
        return metric.number if metric is not None else None

    @property
    def manifest_content(self) -> Mapping[str, Any]:
        content = self.manifest.get("content")
        return content if isinstance(content, Mapping) else {}


def image_label(results: ConformanceResults) -> str:
    """What a run ran on, for people: the image reference, else the shipped stack carried to a bare host, else the
    manifest's variant, else the bare host's torch."""
    if results.image.ref:
        return results.image.ref
    carried = results.stack.carried
    if carried is not None:
        torch = carried.packages.get("torch") or results.environment.get("torch") or "?"
        return f"pytorch-cuda {carried.variant} stack carried to a bare host, torch {torch}"
    manifest = results.manifest_content
    if manifest.get("target"):
        return f"pytorch-cuda {manifest.get('target')}-{manifest.get('flavour', 'runtime')}"
    return f"bare host, torch {results.environment.get('torch') or '?'}"
