"""Run the suite once per case, as a user would (`python3 -m pytest conformance`), each with its results file.

Writes OUT/runs/CASE.json (the suite's results file, when the run wrote one), OUT/runs/CASE.log (pytest's output)
and OUT/runs/cases.json (what ran: the command, the injection, the exit status, the wall time; cases-PART.json for
one part of the catalogue, so that the parts' runs can be put in one folder). Progress goes to stderr, one line a
run.

A control other than the untouched one runs the whole suite in two runs: its timed checks (TIMED) with the GPU to
itself, CASE.timed.json, and the rest side by side with the faults, CASE.json. The matrix reads them as one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from fault_coverage.case_model import TIMED_SUFFIX, UNTOUCHED, Case
from fault_coverage.catalogue import TIMED, UNTIMED
from fault_coverage.host_expectations import read_host
from fault_coverage.injection import InjectionError, prepared

CASE_TIMEOUT_S: Final = 300
SIDE_BY_SIDE: Final = 4  # untimed cases at once: one GPU and 16 cores hold four suites without a timed check
PYTEST: Final = ("-m", "pytest", "-p", "no:cacheprovider", "-q", "-W", "ignore::DeprecationWarning", "conformance")


@dataclass(frozen=True)
class Unit:
    """One suite run: a case, the results file's name, its -k selection, and whether it needs the GPU alone."""

    case: Case
    name: str
    select: str | None
    alone: bool


def units(case: Case) -> tuple[Unit, ...]:
    """A fault and the untouched control: one run. Another control: its timed checks alone, the rest side by side."""
    if case.kind == "fault" or case.name == UNTOUCHED or case.select is not None:
        return (Unit(case, case.name, case.select, case.alone),)
    return (Unit(case, case.name + TIMED_SUFFIX, TIMED, True), Unit(case, case.name, UNTIMED, False))


@dataclass(frozen=True)
class CaseRun:
    name: str
    command: tuple[str, ...]
    injection: str
    exit_status: int | None  # None: it could not be set up, or it ran past the timeout
    wall_s: float
    problem: str | None  # why it has no results file, when it has none

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "command": list(self.command),
            "injection": self.injection,
            "exit_status": self.exit_status,
            "wall_s": round(self.wall_s, 1),
            "problem": self.problem,
        }


def case_markers(case: Case) -> str:
    """The untouched control runs every check; the other cases leave out the informational checks, which gate
    nothing and no matrix row counts (the MAMF search and the LM compile cost seconds each): a control runs every
    gated check (a legitimate setup passes or skips them all)."""
    return case.markers if case.name == UNTOUCHED else f"({case.markers}) and not informational"


def suite_command(
    case: Case, python: str, results: Path, manifest: Path | None = None, select: str | None = None
) -> tuple[str, ...]:
    """The suite's command for ``case``; ``select`` (-k) is the case's own unless given (a control's part)."""
    command: tuple[str, ...] = (
        python,
        *PYTEST,
        "-m",
        case_markers(case),
        "--require-gpu",
        "--conformance-json",
        str(results),
    )
    if manifest is not None:
        command += ("--manifest", str(manifest))
    select = select or case.select
    return command if select is None else (*command, "-k", select)


def run_case(
    case: Case, root: Path, runs: Path, python: str = sys.executable, *, host: Mapping[str, Any] | None = None,
    unit: Unit | None = None,
) -> CaseRun:  # fmt: skip
    """One run of ``case`` (or of one ``unit`` of it), its results file and log under ``runs``."""
    unit = unit or Unit(case, case.name, case.select, case.alone)
    started = time.monotonic()
    command: tuple[str, ...] = ()
    try:
        with prepared(case.injection, root, host) as setup:
            written = setup.results_dir / f"{unit.name}.json"
            command = (*setup.prefix, *suite_command(case, python, written, setup.manifest, unit.select))
            log = (runs / f"{unit.name}.log").open("w", encoding="utf-8")
            with log:
                try:
                    finished = subprocess.run(
                        command, cwd=setup.cwd, env=setup.env, stdout=log, stderr=subprocess.STDOUT,
                        timeout=CASE_TIMEOUT_S, check=False,
                    )  # fmt: skip
                    status: int | None = finished.returncode
                except subprocess.TimeoutExpired:
                    status = None
            problem = None
            if written.is_file():
                shutil.copy2(written, runs / f"{unit.name}.json")
            else:
                problem = "ran past the timeout" if status is None else f"wrote no results file (exit {status})"
    except InjectionError as exc:
        status, problem = None, f"cannot be set up here: {exc}"
    return CaseRun(unit.name, command, case.injection.describe(), status, time.monotonic() - started, problem)


def run_cases(
    cases: Sequence[Case], root: Path, out: Path, python: str = sys.executable, *, side_by_side: int = SIDE_BY_SIDE,
    index_name: str = "cases.json",
) -> list[CaseRun]:  # fmt: skip
    """Every case against the host's expectations file, read once from the host (an ExpectationsError without torch).
    The runs that time kernels go one at a time, with the GPU to themselves; then the others, `side_by_side` at
    once. OUT/runs/INDEX_NAME keeps what ran (earlier runs of other cases in it are kept)."""
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    host = read_host(python)
    (runs / "expectations.json").write_text(json.dumps(host, indent=2) + "\n", encoding="utf-8")
    index = runs / index_name
    earlier = json.loads(index.read_text(encoding="utf-8")) if index.is_file() else []
    planned = [unit for case in cases for unit in units(case)]
    names = {unit.name for unit in planned}
    kept = [r for r in earlier if r.get("name") not in names]
    done: list[CaseRun] = []
    lock = threading.Lock()

    def one(unit: Unit) -> None:
        result = run_case(unit.case, root, runs, python, host=host, unit=unit)
        with lock:
            done.append(result)
            outcome = result.problem or f"exit {result.exit_status}"
            sys.stderr.write(f"[{len(done)}/{len(planned)}] {unit.case.kind} {unit.name}: {outcome} in "
                             f"{result.wall_s:.0f} s ({unit.case.injection.describe()})\n")  # fmt: skip
            sys.stderr.flush()
            index.write_text(json.dumps([*kept, *(r.as_json() for r in done)], indent=2) + "\n", encoding="utf-8")

    for unit in (u for u in planned if u.alone):
        one(unit)
    with ThreadPoolExecutor(max_workers=side_by_side) as pool:
        list(pool.map(one, [u for u in planned if not u.alone]))
    return done
