"""The results reader's metric parsing (pytorch_cuda_contract/results_model.parse_metric) against the one it
replaced, which read every one of Metric's 21 fields from each metric's object, on the same file, in one run
(issue 54: the windowed judge's tests spent over half their time parsing).

    .venv/bin/python benchmarks/results_parse.py [--file PATH] [--runs N] [--rounds R]

It parses a committed H100 fleet run (evidence/fleet-runs/h100/, 87 tests, 55 measurements and 191 per-test
metrics) N times with `parse_results`, once with each reader, alternating for R rounds (old, new, old, new: drift
in the host's load shows as a gap between two rounds of one reader). Before timing, it checks that both readers give
equal results on every committed results file (the fleet runs, tests/fixtures/results/, the GPU sessions), and
refuses to time them otherwise. It prints a table and writes build-output/results-parse.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytorch_cuda_contract import results_file
from pytorch_cuda_contract.results_model import Clocks, Metric, as_float, as_int, as_str, mapping, parse_metric

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build-output" / "results-parse.json"
DEFAULT = ROOT / "evidence/fleet-runs/h100/2026-12-05T18-27Z.json"
COMMITTED = ("evidence/fleet-runs/*/*.json", "tests/fixtures/results/*.json", "evidence/gpu-sessions/*/*.json")


def every_field(name: str, raw: Mapping[str, Any], test: str | None) -> Metric:
    """The reader before issue 54: each of Metric's fields looked up and coerced, present or not."""
    value: float | str | None
    original = raw.get("value")
    number = as_float(original)
    value = number if number is not None else as_str(original)
    device = mapping(raw.get("device"))
    clocks_raw = raw.get("clocks")
    clocks = None
    if isinstance(clocks_raw, Mapping):
        reasons = clocks_raw.get("throttle_reasons")
        clocks = Clocks(
            sm_mhz=as_int(clocks_raw.get("sm_mhz")),
            mem_mhz=as_int(clocks_raw.get("mem_mhz")),
            power_limit_w=as_float(clocks_raw.get("power_limit_w")),
            throttle_reasons=tuple(str(r) for r in reasons) if isinstance(reasons, list) else (),
        )
    return Metric(
        name=name,
        value=value,
        unit=as_str(raw.get("unit")) or "",
        test=test,
        min=as_float(raw.get("min")),
        median=as_float(raw.get("median")),
        max=as_float(raw.get("max")),
        samples=as_int(raw.get("samples")),
        peak=as_float(raw.get("peak")),
        bound=as_float(raw.get("bound")),
        bound_kind=as_str(raw.get("bound_kind")),
        device_index=as_int(device.get("index")),
        device_name=as_str(device.get("name")),
        clocks=clocks,
        contradicts=as_str(raw.get("contradicts")),
        ceiling=as_float(raw.get("ceiling")),
        informational=raw.get("informational") is True or (raw.get("bound") is None and raw.get("ceiling") is None),
        rel_spread=as_float(raw.get("rel_spread")),
        rel_iqr=as_float(raw.get("rel_iqr")),
        rel_error=as_float(raw.get("rel_error")),
        stopped=as_str(raw.get("stopped")),
    )


READERS: dict[str, Callable[[str, Mapping[str, Any], str | None], Metric]] = {
    "every field (before)": every_field,
    "present keys (now)": parse_metric,
}


def parse_with(reader: Callable[..., Metric], data: bytes) -> results_file.ConformanceResults:
    results_file.parse_metric = reader  # type: ignore[attr-defined]  # the one name _tests and _from_document call
    return results_file.parse_results(data)


def check_equal() -> int:
    files = sorted(p for pattern in COMMITTED for p in ROOT.glob(pattern))
    for path in files:
        data = path.read_bytes()
        try:
            before, now = (parse_with(reader, data) for reader in READERS.values())
        except results_file.ResultsFileError:
            continue  # not a results file (a session's other JSON): both readers refuse it alike
        if before != now:
            sys.exit(f"results_parse: the readers differ on {path.relative_to(ROOT)}; no timing")
    return len(files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=DEFAULT)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    checked = check_equal()
    data = args.file.read_bytes()
    seconds: dict[str, list[float]] = {name: [] for name in READERS}
    for _ in range(args.rounds):
        for name, reader in READERS.items():
            parse_with(reader, data)  # untimed: warm
            began = time.process_time()
            for _ in range(args.runs):
                parse_with(reader, data)
            seconds[name].append(time.process_time() - began)
    results_file.parse_metric = parse_metric  # type: ignore[attr-defined]
    print(f"{args.file.name}: parse_results x{args.runs}, CPU seconds a round ({checked} committed files equal)")
    print(f"{'reader':<24} {'rounds':<24} {'ms a parse (median)':>20}")
    for name, rounds in seconds.items():
        each = statistics.median(rounds) / args.runs * 1000
        print(f"{name:<24} {' '.join(f'{s:.2f}' for s in rounds):<24} {each:>20.2f}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    record = {"file": str(args.file), "runs": args.runs, "equal_files": checked, "cpu_seconds": seconds}
    OUT.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
