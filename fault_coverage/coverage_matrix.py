"""The fault x check matrix and the coverage figure, from one card's results files.

- The checks are the tests of the untouched control run, by short name.
- A check is *gated* when it passed in the untouched run and is not marked informational; one that skipped there is
  *not applicable on this host* (a multi-GPU check on one GPU, a pin check without a manifest), with its reason.
- A fault *trips* a check when the check failed in the fault's run and the catalogue says the fault targets it. A
  failure it does not target is shown as collateral; a target that did not fail is a missed expectation.
- A control trips nothing: any failure in a control run is a finding, and its named skips must be there.
- Coverage: gated checks tripped by at least one fault, over gated checks; beside it the coverage by real faults
  (kind "environment" or "setting": what a user's host can have as it is), and the checks each kind trips.
- A fault that trips nothing is a finding, unless the catalogue says why one run on one GPU cannot show it (its
  `gap`): then it is listed as a gap with that reason.
- Each case records the suite digest of its run(s): a matrix whose runs span several suite versions says which
  cases were judged by a suite older than its latest run's (``suites``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from fault_coverage.case_model import FAULT_KINDS, TIMED_SUFFIX, UNTOUCHED, Case, check_name
from pytorch_cuda_contract.results_file import ResultsFileError, load_results
from pytorch_cuda_contract.results_model import ConformanceResults

# 2: fault kinds, real-fault coverage, gaps; 3: not_run (the GPU cases without a run); 4: suite digests (suites)
MATRIX_SCHEMA: Final = 4
SUITE_BUDGET_S: Final = 120.0  # the whole suite on one GPU


def _outcomes(results: ConformanceResults | None) -> dict[str, dict[str, str | None]]:
    if results is None:
        return {}
    return {
        check_name(t.nodeid): {"outcome": t.outcome, "phase": t.phase, "message": (t.message or "")[:300] or None}
        for t in results.tests.values()
    }


def _load(runs: Path, case: Case, name: str | None = None) -> tuple[ConformanceResults | None, str | None]:
    path = runs / f"{name or case.name}.json"
    if not path.is_file():
        return None, "no results file: the run crashed, timed out or was not run"
    try:
        return load_results(path), None
    except ResultsFileError as exc:
        return None, str(exc)


def _identity(results: ConformanceResults | None) -> list[tuple[str, str]]:
    """(started_at, suite digest) of a run that has both."""
    if results is None or not results.suite_digest:
        return []
    return [(results.started_at or "", results.suite_digest)]


def _case_outcomes(
    runs: Path, case: Case
) -> tuple[dict[str, dict[str, str | None]], str | None, bool, list[tuple[str, str]]]:
    """A case's outcomes, its problem, whether it ran here, and the (start, suite digest) of each of its runs: a
    control's timed run (CASE.timed.json) and its other run (CASE.json) read as one."""
    results, problem = _load(runs, case)
    outcomes = _outcomes(results)
    identities = _identity(results)
    ran = results is not None or (runs / f"{case.name}.log").exists()
    timed_name = case.name + TIMED_SUFFIX
    if (runs / f"{timed_name}.json").exists() or (runs / f"{timed_name}.log").exists():
        timed, timed_problem = _load(runs, case, timed_name)
        # each check ran in one of the two runs: the other run's "not_run" (deselected) must not hide its outcome
        outcomes.update({check: o for check, o in _outcomes(timed).items() if o["outcome"] != "not_run"})
        problem = problem or (timed_problem and f"its timed run: {timed_problem}")
        identities += _identity(timed)
        ran = True
    return outcomes, problem, ran, identities


def suite_versions(identities: Mapping[str, Sequence[tuple[str, str]]]) -> dict[str, Any]:
    """The suite digests of a matrix's runs (``identities``: case -> its runs' (start, digest)): the latest run's
    digest, the cases of each digest, and the cases judged (in one run at least) by another, older suite."""
    runs = sorted((start, digest) for pairs in identities.values() for start, digest in pairs)
    latest = runs[-1][1] if runs else None
    by_digest: dict[str, list[str]] = {}
    for case, pairs in identities.items():
        for digest in sorted({d for _, d in pairs}):
            by_digest.setdefault(digest, []).append(case)
    older = [case for case, pairs in identities.items() if any(d != latest for _, d in pairs)]
    return {"latest": latest, "by_digest": by_digest, "older": older}


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
        "name": case.name, "kind": case.kind, "fault_kind": case.fault_kind, "real": case.real, "gap": case.gap,
        "models": case.models, "injection": case.injection.describe(),
        "select": case.select, "markers": case.markers, "problem": problem, "wall_s": wall_s,
        "failed": failed,
    }  # fmt: skip
    if case.kind == "fault":
        entry["tripped"] = [c for c in failed if case.expects_to_trip(c)]
        entry["collateral"] = [c for c in failed if not case.expects_to_trip(c)]
        entry["missed"] = [c for c in gated if case.must_trip(c) and outcomes.get(c, {}).get("outcome") != "failed"]
        entry["targets"] = list(case.trips) + [f"{check} (where {condition})" for check, condition in case.trips_where]
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
    not_run: list[str] = []
    identities: dict[str, list[tuple[str, str]]] = {}
    grid: dict[str, dict[str, str]] = {c: {} for c in baseline}
    for case in cases:
        if case.name == UNTOUCHED:
            outcomes, problem, ran, identity = baseline, None, True, _identity(untouched)
            timed, _ = _load(runs, case, case.name + TIMED_SUFFIX)
            identity += _identity(timed)
        else:
            outcomes, problem, ran, identity = _case_outcomes(runs, case)
        if ran:
            identities[case.name] = identity
        if not ran:
            if case.where == "gpu":
                not_run.append(case.name)  # a partial matrix names what it lacks
            continue
        wall = sum(w for name, w in walls.items() if name in (case.name, case.name + TIMED_SUFFIX)) or None
        entries.append(_case_entry(case, outcomes, gated, problem, wall))
        for check, row in grid.items():
            row[case.name] = str(outcomes.get(check, {}).get("outcome") or "absent")
    tripped_by = {c: [e["name"] for e in entries if e["kind"] == "fault" and c in e["tripped"]] for c in gated}
    real_by = {c: [e["name"] for e in entries if e["kind"] == "fault" and e["real"] and c in e["tripped"]]
               for c in gated}  # fmt: skip
    return {
        "schema": MATRIX_SCHEMA,
        "card": card,
        "host": _gpu(untouched),
        "coverage": _coverage(gated, tripped_by, real_by, entries),
        "gaps": [{"fault": e["name"], "reason": e["gap"]} for e in entries if _is_gap(e)],
        "checks": {
            c: {
                "untouched": o["outcome"],
                "reason": o["message"] if o["outcome"] != "passed" else None,
                "informational": informational.get(c),
                "gated": c in gated,
                "tripped_by": tripped_by.get(c, []),
                "tripped_by_real": real_by.get(c, []),
            }
            for c, o in baseline.items()
        },
        "cases": entries,
        "not_run": not_run,
        "suites": suite_versions(identities),
        "grid": grid,
        "findings": findings(entries, baseline) + suite_findings(runs / f"{UNTOUCHED}.json"),
    }


def _percent(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def _coverage(gated: Sequence[str], tripped_by: Mapping[str, Sequence[str]], real_by: Mapping[str, Sequence[str]],
              entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """The figure, total and by real faults, and how many gated checks each kind of fault trips."""
    covered = [c for c in gated if tripped_by[c]]
    real = [c for c in gated if real_by[c]]
    kinds = {e["name"]: e["fault_kind"] for e in entries if e["kind"] == "fault"}
    by_kind = {kind: sum(1 for c in gated if any(kinds[f] == kind for f in tripped_by[c])) for kind in FAULT_KINDS}
    return {
        "gated": len(gated),
        "tripped": len(covered),
        "percent": _percent(len(covered), len(gated)),
        "untripped": [c for c in gated if not tripped_by[c]],
        "real_tripped": len(real),
        "real_percent": _percent(len(real), len(gated)),
        "real_untripped": [c for c in gated if not real_by[c]],
        "by_kind": by_kind,
    }


def _is_gap(entry: Mapping[str, Any]) -> bool:
    """A fault that tripped nothing for the reason the catalogue gives (it ran: a run that failed is a finding)."""
    return entry["kind"] == "fault" and bool(entry["gap"]) and not entry["tripped"] and not entry["problem"]


def _walls(runs: Path) -> dict[str, float]:
    """Each run's wall time, from every part's index (cases.json, cases-PART.json)."""
    walls: dict[str, float] = {}
    for path in sorted(runs.glob("cases*.json")):
        walls.update({str(r["name"]): float(r["wall_s"]) for r in json.loads(path.read_text(encoding="utf-8"))})
    return walls


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
            if not entry["tripped"] and not entry["missed"] and not entry["problem"] and not entry["gap"]:
                found.append(f"fault {entry['name']} tripped nothing: none of its targets is gated here "
                             f"({', '.join(entry['targets'])})")  # fmt: skip
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
