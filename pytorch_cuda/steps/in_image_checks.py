"""Checks that run inside a candidate image before any tag moves: the conformance suite's CPU part."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from conformance import contract
from pytorch_cuda.engine.protocol import Engine

RESULTS_PATH = contract.RESULTS_PATH
JUNIT_PATH = contract.JUNIT_PATH
CHECK_SHM_SIZE = "2g"
CHECK_COMMAND = ("conformance", "-m", "cpu", "-q", "-rfEs", "-p", "no:randomly")


@dataclass(frozen=True)
class CheckReport:
    passed: bool
    exit_code: int
    counts: dict[str, int]
    failures: tuple[str, ...]
    output_tail: str
    results: dict[str, Any] | None
    reused: bool = False  # remembered from an earlier passing run on the same image ID and suite


def run_cpu_conformance(engine: Engine, ref: str, timeout_s: float = 1800.0) -> CheckReport:
    """Run `conformance -m cpu` in the image (no GPU needed) and read its JSON result file back."""
    result = engine.run(
        ref,
        list(CHECK_COMMAND),
        shm_size=CHECK_SHM_SIZE,
        timeout_s=timeout_s,
        collect=(RESULTS_PATH, JUNIT_PATH),
    )
    raw = result.files.get(RESULTS_PATH)
    results: dict[str, Any] | None = json.loads(raw) if raw else None
    counts, failures = _summarise(results)
    tail = "\n".join(result.output.strip().splitlines()[-25:])
    passed = result.exit_code == 0 and not result.timed_out and results is not None and counts.get("passed", 0) > 0
    return CheckReport(passed, result.exit_code, counts, failures, tail, results)


def _summarise(results: dict[str, Any] | None) -> tuple[dict[str, int], tuple[str, ...]]:
    if not results:
        return {}, ()
    counts: dict[str, int] = {}
    failures: list[str] = []
    tests: dict[str, dict[str, Any]] = results.get("tests", {})
    for nodeid, test in tests.items():
        outcome = str(test.get("outcome", "unknown"))
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("failed", "error"):
            failures.append(f"{nodeid}: {str(test.get('message', ''))[:300]}")
    return counts, tuple(failures)
