"""python3 -m fault_coverage {list | run | matrix}: the conformance suite under real faults, on one GPU host.

  list                               the catalogue: faults, controls, what each injects and must trip
  run --card NAME --out DIR [--part P] [CASE…]
                                     run the named cases (default: every case the GPU host runs, or those of part
                                     P; the untouched control first where DIR/runs has none yet, except for the
                                     faults part), one results file each under DIR/runs, then write the matrix of
                                     everything DIR/runs holds (once the untouched run is there)
  matrix --card NAME --out DIR       (re)write DIR/matrix.json and DIR/matrix.md from DIR/runs

Parts, for a GPU lease too short for the whole catalogue: `controls` (the untouched run and every control over the
whole suite) and `faults` (every fault); with CASE names a part runs only those (no untouched run added), so that
a part can be split again. Unpack every command's runs/ into one folder, then `matrix` reads them as one.

Run it from the checkout's root, as root (a private /dev/shm and another uid need it), on a host with one GPU,
python3, torch, pytest and nvidia-ml-py. Exit status: 0 when every gated check was tripped, no finding remains and
every case of the GPU host has a run, 1 otherwise, 2 on bad input (an unknown case, no untouched results). A matrix
of some cases only says which cases it lacks, on its page and in its JSON (`not_run`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fault_coverage.case_model import UNTOUCHED, Case
from fault_coverage.case_runner import run_cases
from fault_coverage.catalogue import CASES
from fault_coverage.coverage_matrix import build_matrix
from fault_coverage.coverage_page import render
from fault_coverage.host_expectations import ExpectationsError

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("controls", "faults")


def in_part(case: Case, part: str | None) -> bool:
    """Whether the GPU host runs ``case`` in ``part`` (None: the whole catalogue)."""
    return case.where == "gpu" and (part is None or (case.kind == "control") == (part == "controls"))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m fault_coverage", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("list", help="the catalogue")
    for verb in ("run", "matrix"):
        sub = verbs.add_parser(verb, help=f"{verb} (see above)")
        sub.add_argument("--card", required=True, help="the card's label in the matrix: h100, h200, ...")
        sub.add_argument("--out", required=True, type=Path, help="the folder of runs/ and the matrix")
        if verb == "run":
            sub.add_argument("--part", choices=PARTS, help="only the controls, or only the faults (see above)")
            sub.add_argument("cases", nargs="*", help="case names (default: every case the GPU host runs)")
    return parser


def _write_matrix(card: str, out: Path) -> int:
    if not (out / "runs" / f"{UNTOUCHED}.json").is_file() and (out / "runs").is_dir():
        print(f"no untouched run in {out / 'runs'} yet: unpack the controls part's runs/ beside these, then "
              f"`python3 -m fault_coverage matrix --card {card} --out DIR`")  # fmt: skip
        return 0
    try:
        matrix = build_matrix(CASES, out / "runs", card)
    except ValueError as exc:
        sys.stderr.write(f"fault_coverage: {exc}\n")
        return 2
    (out / "matrix.json").write_text(json.dumps(matrix, indent=1) + "\n", encoding="utf-8")
    (out / "matrix.md").write_text(render(matrix), encoding="utf-8")
    coverage = matrix["coverage"]
    print(
        f"fault coverage on the {card}: {coverage['tripped']}/{coverage['gated']} gated checks ({coverage['percent']}%)"
        f", by real faults {coverage['real_tripped']}/{coverage['gated']} ({coverage['real_percent']}%)"
    )
    for gap in matrix["gaps"]:
        print(f"gap: {gap['fault']}: {gap['reason']}")
    for finding in matrix["findings"]:
        print(f"finding: {finding}")
    if matrix["not_run"]:
        print(
            f"partial: {len(matrix['not_run'])} cases have no run in {out / 'runs'} (run them, then `matrix` again): "
            + " ".join(matrix["not_run"])
        )
    print(f"wrote {out / 'matrix.md'} and {out / 'matrix.json'}")
    complete = not matrix["findings"] and not matrix["not_run"] and coverage["tripped"] == coverage["gated"]
    return 0 if complete else 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.verb == "list":
        for case in CASES:
            kind = case.fault_kind or case.kind
            print(f"{kind:14} {case.name} [{case.where}]: {case.models}\n        injects: {case.injection.describe()}")
            if case.trips:
                print(f"        trips: {', '.join(case.trips)}")
            if case.gap:
                print(f"        gap: {case.gap}")
        return 0
    if args.verb == "run":
        known = {case.name: case for case in CASES}
        unknown = [name for name in args.cases if name not in known]
        if unknown:
            sys.stderr.write(f"fault_coverage: unknown cases {unknown}; `python3 -m fault_coverage list` names them\n")
            return 2
        wanted = list(args.cases or [c.name for c in CASES if in_part(c, args.part)])
        missing = not (args.out / "runs" / f"{UNTOUCHED}.json").is_file()
        if UNTOUCHED not in wanted and missing and args.part != "faults" and not (args.part and args.cases):
            wanted.insert(0, UNTOUCHED)  # the matrix is read against it
        # one index a command, so that the runs of several commands unpack into one folder side by side
        index = f"cases-{(args.cases or [args.part])[0]}.json" if args.part else "cases.json"
        try:
            run_cases([known[n] for n in wanted if known[n].where == "gpu"], ROOT, args.out, index_name=index)
        except ExpectationsError as exc:
            sys.stderr.write(f"fault_coverage: {exc}. Run it with the python that has torch, on the GPU host.\n")
            return 2
    return _write_matrix(args.card, args.out)


if __name__ == "__main__":
    sys.exit(main())
