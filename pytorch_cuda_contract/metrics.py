"""Metrics of results.json schema 2: the value, its unit and optional fields.

A metric without ``bound``/``ceiling`` is written with ``"informational": true``: recorded, not gated.

A timed number carries its own spread over the repetitions it is the median of: ``min``/``median``/``max``,
``samples`` (the count of repetitions), ``rel_spread`` ((max - min) / median), ``rel_iqr`` (the interquartile range
/ median), and, from the timing harness (results_format.HARNESS_VERSION), ``rel_error`` (the relative standard error
of the median when the repetitions stopped) and ``stopped`` (why they stopped: results_format.STOPPED).

A metric whose name contains a dot (``gemm.fp16.tflops``) has a *stable name*:
it is also listed in the document's flat ``measurements`` index, where the
precision report looks it up.  Names without a dot are per-test details.
"""

from __future__ import annotations

import math
import statistics
from typing import Final, Protocol

from pytorch_cuda_contract.results_format import STOPPED

OPTIONAL_FIELDS: Final = frozenset(
    {
        "min", "median", "max", "samples", "peak", "bound", "bound_kind", "ceiling", "device", "clocks",
        "contradicts", "informational", "rel_spread", "rel_iqr", "rel_error", "stopped",
    }
)  # fmt: skip
NUMBER_FIELDS: Final = frozenset(
    {"min", "median", "max", "peak", "bound", "ceiling", "rel_spread", "rel_iqr", "rel_error"}
)
BOUND_KINDS: Final = ("min", "max")


class RecordMetric(Protocol):
    def __call__(self, name: str, value: float | str, unit: str, **fields: object) -> None: ...


class RecordNote(Protocol):
    def __call__(self, text: str) -> None: ...


class RecordDtype(Protocol):
    def __call__(self, dtype: str, verdict: str, reason: str, device_index: int = 0) -> None: ...


def json_number(value: float) -> float | str:
    """Finite floats as numbers; "nan" / "inf" / "-inf" as strings (valid JSON)."""
    if math.isfinite(value):
        return float(value)
    return str(value)


def is_stable_name(name: str) -> bool:
    return "." in name


def build_metric(value: float | str | bool, unit: str, fields: dict[str, object]) -> dict[str, object]:
    """The JSON object of one metric; rejects unknown fields (a programming error)."""
    unknown = set(fields) - OPTIONAL_FIELDS
    if unknown:
        raise ValueError(f"unknown metric fields {sorted(unknown)}; allowed: {sorted(OPTIONAL_FIELDS)}")
    if fields.get("bound_kind") not in (None, *BOUND_KINDS):
        raise ValueError(f"bound_kind must be one of {BOUND_KINDS}, not {fields['bound_kind']!r}")
    if fields.get("stopped") not in (None, *STOPPED):
        raise ValueError(f"stopped must be one of {STOPPED}, not {fields['stopped']!r}")
    if fields.get("bound") is None:
        fields = {k: v for k, v in fields.items() if k != "bound_kind"}
    gated = fields.get("bound") is not None or fields.get("ceiling") is not None
    if gated and fields.get("informational"):
        raise ValueError("a metric with a bound is not informational")
    # Every number either has a bound a plausible fault crosses, or says that it is informational.
    # (A string such as a backend name is gated by its test's assertion, not by a bound.)
    numeric = not isinstance(value, str)
    fields = {
        **{k: v for k, v in fields.items() if k != "informational"},
        "informational": (numeric and not gated) or None,
    }
    shown: float | str = value if isinstance(value, str) else json_number(float(value))
    metric: dict[str, object] = {"value": shown, "unit": unit}
    for key, item in fields.items():
        if item is None and key != "peak":
            continue
        if key in NUMBER_FIELDS and isinstance(item, int | float):
            metric[key] = json_number(float(item))
        elif key == "samples" and isinstance(item, int | float):
            metric[key] = int(item)
        else:
            metric[key] = item
    return metric


def relative_spread(values: list[float]) -> tuple[float, float]:
    """((max - min) / median, interquartile range / median) of the measurements; nan where the median is 0."""
    centre = float(statistics.median(values))
    if centre == 0:
        return math.nan, math.nan
    iqr = 0.0
    if len(values) > 1:
        first, _, third = statistics.quantiles(values, n=4, method="inclusive")
        iqr = third - first
    return (max(values) - min(values)) / abs(centre), iqr / abs(centre)


def spread(values: list[float]) -> dict[str, object]:
    """min / median / max / samples of a list of measurements, and their relative spread and interquartile range."""
    rel_spread, rel_iqr = relative_spread(values)
    return {
        "min": min(values),
        "median": float(statistics.median(values)),
        "max": max(values),
        "samples": len(values),
        "rel_spread": rel_spread,
        "rel_iqr": rel_iqr,
    }


def rate_spread(times_ms: list[float], work: float) -> tuple[float, dict[str, object]]:
    """Throughput (``work`` per second / 1e12) at the median time, with min/median/max over the runs."""
    rates = [work / (t * 1e-3) / 1e12 for t in times_ms if t > 0]
    if not rates:
        return float("nan"), {"samples": 0}
    fields = spread(rates)
    return float(statistics.median(rates)), fields
