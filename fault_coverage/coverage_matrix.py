"""The fault x check matrix and the coverage figure, from one card's results files.

- The checks are the tests of the untouched control run, by short name.
- A check is *gated* when it passed in the untouched run and is not marked informational; one that skipped there is
  *not applicable on this host* (a multi-GPU check on one GPU, a pin check without a manifest), with its reason.
- A fault *trips* a check when the check failed in the fault's run and the catalogue says the fault targets it. A
  failure it does not target is shown as collateral; a target that did not fail is a missed expectation.
- A control trips nothing: any failure in a control run is a finding, and its named skips must be there.
- Coverage: gated checks tripped by at least one fault, over gated checks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from fault_coverage.case_model import Case, check_name
from pytorch_cuda_contract.results_file import ResultsFileError, load_results
from pytorch_cuda_contract.results_model import ConformanceResults

UNTOUCHED: Final = "untouched"
MATRIX_SCHEMA: Final = 1
SUITE_BUDGET_S: Final = 120.0  # the whole suite on one GPU


def _outcomes(results: ConformanceResults | None) -> dict[str, dict[str, str | None]]:
    if results is None:
        return {}
    return {
        check_name(t.nodeid): {"outcome": t.outcome, "phase": t.phase, "message": (t.message or "")[:300] or None}
        for t in results.tests.values()
    }


def _load(runs: Path, case: Case) -> tuple[ConformanceResults | None, str | None]:
    path = runs / f"{case.name}.json"
    if not path.is_file():
        return None, "no results file: the run crashed, timed out or was not run"
    try:
        return load_results(path), None
    except ResultsFileError as exc:
        return None, str(exc)


def _gpu(results: ConformanceResults) -> dict[str, Any]:
    gpu = results.gpus[0] if results.gpus else None
    return {
        "gpu": gpu.name if gpu else None,
        "compute_capability": gpu.compute_capability if gpu else None,
        "driver": gpu.driver if gpu else None,
        "torch": results.environment.get("torch"),
        "cuda": results.environment.get("cuda"),
        "started_at": results.started_at,
        "suite_wall_s": results.wall_time_s,
    }


def _case_entry(case: Case, outcomes: Mapping[str, Mapping[str, str | None]], gated: Sequence[str],
                problem: str | None, wall_s: float | None) -> dict[str, Any]:  # fmt: skip
    failed = sorted(c for c, o in outcomes.items() if o["outcome"] == "failed")
    entry: dict[str, Any] = {
        "name": case.name, "kind": case.kind, "models": case.models, "injection": case.injection.describe(),
        "select": case.select, "markers": case.markers, "problem": problem, "wall_s": wall_s,
        "failed": failed,
    }  # fmt: skip
    if case.kind == "fault":
        entry["tripped"] = [c for c in failed if case.expects_to_trip(c)]
        entry["collateral"] = [c for c in failed if not case.expects_to_trip(c)]
        entry["missed"] = [
            c for c in gated if case.expects_to_trip(c) and outcomes.get(c, {}).get("outcome") != "failed"
        ]
        entry["targets"] = list(case.trips)
    else:
        entry["missing_skips"] = [
            f"{check} (skip naming {text!r})"
            for check, text in case.skips
            if not any(
                c.startswith(check) and o["outcome"] == "skipped" and text in (o["message"] or "")
                for c, o in outcomes.items()
            )
        ]
    return entry


def build_matrix(cases: Sequence[Case], runs: Path, card: str) -> dict[str, Any]:
    """The matrix of one card. Raises ValueError without the untouched control's results file."""
    by_name = {case.name: case for case in cases}
    untouched, problem = _load(runs, by_name[UNTOUCHED])
    if untouched is None:
        raise ValueError(f"{runs}: the untouched control has no readable results ({problem}); run it first")
    walls = _walls(runs)
    baseline = _outcomes(untouched)
    informational = {check_name(t.nodeid): t.informational for t in untouched.tests.values() if t.informational}
    gated = [c for c, o in baseline.items() if o["outcome"] == "passed" and c not in informational]
    entries: list[dict[str, Any]] = []
    grid: dict[str, dict[str, str]] = {c: {} for c in baseline}
    for case in cases:
        results, problem = (untouched, None) if case.name == UNTOUCHED else _load(runs, case)
        if results is None and not (runs / f"{case.name}.log").exists():
            continue  # not run on this card
        outcomes = _outcomes(results)
        entries.append(_case_entry(case, outcomes, gated, problem, walls.get(case.name)))
        for check, row in grid.items():
            row[case.name] = str(outcomes.get(check, {}).get("outcome") or "absent")
    tripped_by = {c: [e["name"] for e in entries if e["kind"] == "fault" and c in e["tripped"]] for c in gated}
    covered = [c for c in gated if tripped_by[c]]
    return {
        "schema": MATRIX_SCHEMA,
        "card": card,
        "host": _gpu(untouched),
        "coverage": {
            "gated": len(gated),
            "tripped": len(covered),
            "percent": round(100.0 * len(covered) / len(gated), 1) if gated else None,
            "untripped": [c for c in gated if not tripped_by[c]],
        },
        "checks": {
            c: {
                "untouched": o["outcome"],
                "reason": o["message"] if o["outcome"] != "passed" else None,
                "informational": informational.get(c),
                "gated": c in gated,
                "tripped_by": tripped_by.get(c, []),
            }
            for c, o in baseline.items()
        },
        "cases": entries,
        "grid": grid,
        "findings": findings(entries, baseline) + suite_findings(runs / f"{UNTOUCHED}.json"),
    }


def _walls(runs: Path) -> dict[str, float]:
    path = runs / "cases.json"
    if not path.is_file():
        return {}
    return {str(r["name"]): float(r["wall_s"]) for r in json.loads(path.read_text(encoding="utf-8"))}


def findings(entries: Sequence[Mapping[str, Any]], baseline: Mapping[str, Mapping[str, str | None]]) -> list[str]:
    """What makes this card's matrix not clean: each one a sentence."""
    found = [f"the untouched suite failed {c}" for c, o in baseline.items() if o["outcome"] == "failed"]
    for entry in entries:
        if entry["problem"]:
            found.append(f"{entry['name']}: {entry['problem']}")
        if entry["kind"] == "control":
            found += [f"control {entry['name']} failed {c}" for c in entry["failed"] if entry["name"] != UNTOUCHED]
            found += [f"control {entry['name']} lacks the {s}" for s in entry["missing_skips"]]
        else:
            found += [f"fault {entry['name']} did not trip {c}" for c in entry["missed"]]
    return found


def suite_findings(untouched: Path) -> list[str]:
    """The untouched run's own promises: the whole suite within its budget, and every number it records has a
    bound or says it is informational (read from the raw file: the contract's reader fills the flag in)."""
    document = json.loads(untouched.read_text(encoding="utf-8"))
    found = []
    wall = float(document.get("wall_time_s") or 0.0)
    if wall > SUITE_BUDGET_S:
        found.append(f"the whole suite took {wall:.0f} s, over its {SUITE_BUDGET_S:.0f} s budget")
    for nodeid, test in document.get("tests", {}).items():
        for name, metric in test.get("metrics", {}).items():
            numeric = not isinstance(metric.get("value"), str) or metric["value"] in ("nan", "inf", "-inf")
            bounded = metric.get("bound") is not None or metric.get("ceiling") is not None
            if numeric and not bounded and metric.get("informational") is not True:
                found.append(f"{check_name(nodeid)} records {name} with no bound and no informational flag")
    return found
