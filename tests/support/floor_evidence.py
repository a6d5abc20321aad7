"""The committed legitimate runs each measured floor rests on (conformance/support/expectations/measured_floors.py):
the untouched nightly runs of a SKU (the runs scripts/decay-evidence.sh stores as nightly), and for a
METRIC.deterministic floor the deterministic-algorithms control's runs. What a floor claims that they contradict: a
floor too close to the lowest legitimate run (a quiet lease away from a false failure), or a "lowest untouched run"
that is not the committed runs' lowest, or a fault named as crossing it that gave more than the floor."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.support.expectations.measured_floors import (
    DETERMINISTIC,
    MEASURED_FLOORS,
    MeasuredFloor,
    StackFloors,
    torch_line,
)
from pytorch_cuda_contract.peaks import lookup_peak
from pytorch_cuda_contract.results_file import load_results

NIGHTLY: Final = (
    "evidence/fleet-runs/*/*.json",
    "evidence/fault-coverage/*/runs/untouched.json",
    "evidence/reports/h200/results.json",
    "evidence/gpu-sessions/h200-2026-12-04/conformance-results*.json",
    "evidence/gpu-sessions/h200-2026-12-04-regrouped/conformance-results.json",
    "evidence/gpu-sessions/h200-2026-12-04-headers/results.json",
)
DETERMINISTIC_RUNS: Final = ("evidence/fault-coverage/*/runs/deterministic-algorithms*.json",)
# A floor sits at least this far under the lowest legitimate run: the first run of a fresh H100 lease gave conv fp32
# 11% and conv bf16 18% under the history's median (evidence/fleet-runs/h100, 2026-12-06 07:52 and 14:19).
MARGIN: Final = 1.10


@dataclass(frozen=True)
class Lowest:
    value: float
    run: str  # the results file, relative to the root


def _files(root: Path, patterns: Iterable[str]) -> list[Path]:
    return sorted({path for pattern in patterns for path in root.glob(pattern)})


def lowest_values(
    root: Path, patterns: Iterable[str], suffix: str = "", line: str | None = None
) -> dict[tuple[str, str], Lowest]:
    """(SKU, metric + suffix) -> the lowest number over the results files the patterns match (read by the
    contract's one reader); with ``line``, only the runs of that torch release line; without, only the runs of a
    bare host's own torch or an image (a carried stack's runs are its STACK_FLOORS' evidence)."""
    lowest: dict[tuple[str, str], Lowest] = {}
    for path in _files(root, patterns):
        results = load_results(path)
        spec = lookup_peak(results.gpus[0].name) if results.gpus else None
        if line is None and results.stack.kind == "carried":
            continue
        if spec is None or (line is not None and torch_line(str(results.environment.get("torch", ""))) != line):
            continue
        for metric, measurement in results.measurements.items():
            value, key = measurement.number, (spec.gpu, metric + suffix)
            if value is not None and (key not in lowest or value < lowest[key].value):
                lowest[key] = Lowest(value, str(path.relative_to(root)))
    return lowest


def fault_values(fault: str) -> dict[str, float]:
    """'A=1: 3.89-4.63; cuDNN off: 27.7' -> {'A=1': 4.63, 'cuDNN off': 27.7}: each named fault's highest value."""
    values = {}
    for part in fault.split("; "):
        name, _, given = part.rpartition(": ")
        numbers = re.findall(r"\d+(?:\.\d+)?", given)
        if name and numbers:
            values[name] = max(float(n) for n in numbers)
    return values


def committed_lowest(root: Path) -> dict[tuple[str, str], Lowest]:
    return {**lowest_values(root, NIGHTLY), **lowest_values(root, DETERMINISTIC_RUNS, DETERMINISTIC)}


def floor_problems(
    floors: Mapping[str, Mapping[str, MeasuredFloor]], lowest: Mapping[tuple[str, str], Lowest]
) -> list[str]:
    """One line per measured floor the committed runs contradict (none: every floor holds its claims)."""
    problems = []
    for sku, by_metric in floors.items():
        for key, floor in by_metric.items():
            low = lowest.get((sku, key))
            where = f"{key} on {sku}"
            problems += [
                f"{where}: names {name} as crossing the floor {floor.floor:g}, but it gave {value:g}"
                for name, value in fault_values(floor.fault).items()
                if value >= floor.floor
            ]
            if low is None:
                problems.append(f"{where}: no committed legitimate run measures it")
            elif floor.floor * MARGIN > low.value:
                problems.append(
                    f"{where}: the floor {floor.floor:g} is within {MARGIN:g}x of the lowest legitimate run "
                    f"{low.value:.4g} ({low.run}); lower it to at most {low.value / MARGIN:.4g}"
                )
            elif not math.isclose(floor.lowest_run, low.value, rel_tol=0.005):
                problems.append(
                    f"{where}: says its lowest run is {floor.lowest_run:g}, the committed runs' lowest is "
                    f"{low.value:.4g} ({low.run})"
                )
    return problems


def stack_floor_problems(stack_floors: Mapping[tuple[str, str], StackFloors], root: Path) -> list[str]:
    """One line per claim of a stack's own floors that its committed untouched runs contradict, and per shared floor
    (MEASURED_FLOORS) that those runs put within the margin where the stack has no floor of its own."""
    problems = []
    for (line, sku), own in stack_floors.items():
        lowest = lowest_values(root, [own.runs], line=line)
        problems += [f"torch {line}: {problem}" for problem in floor_problems({sku: own.floors}, lowest)]
        for key, floor in MEASURED_FLOORS.get(sku, {}).items():
            low = lowest.get((sku, key))
            if key not in own.floors and low is not None and floor.floor * MARGIN > low.value:
                problems.append(
                    f"torch {line}: {key} on {sku}: the shared floor {floor.floor:g} is within {MARGIN:g}x of this "
                    f"stack's run {low.value:.4g} ({low.run}); give the stack its own floor in STACK_FLOORS"
                )
    return problems
