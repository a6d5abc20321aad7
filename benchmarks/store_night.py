"""One more night on a store already built (issue 55): a 44,000-run store takes minutes to build, so this times a
night on a store that benchmarks/store_scale.py or synthetic_fleet.bulk_store left, and may time it with another
checkout's code (the previous code, side by side) on a copy of the same store.

    .venv/bin/python benchmarks/store_night.py --store PATH.sqlite|postgresql://... --night 366
        [--code CHECKOUT] [--site-out DIR] [--steps previous,ingest,judge,site|site-judge] [--gpus 20 --variants 6]

The night's runs (one per GPU model x variant, night number --night: the store holds nights 0 to --night - 1) are
written as results files, then each step is a fresh `build.py` process run from --code (default: this checkout), on
the clock and on the CPU (its own user + system time; a PostgreSQL server's is not in it): ``previous`` is last
night's judge and site (not part of the night: the judge keeps each history's window, decay/windowed.py, and the
site is what tonight's incremental build starts from), then ``ingest`` (`results ingest --skip-duplicates`),
``judge`` (`results judge --json`), ``site`` (`site` into --site-out, incremental over last night's),
``site-judge`` (`site --judge`: the judge and the site in one read, what the nightly runs instead of ``judge`` then
``site``) and ``full`` (`site --full` into a new folder). It prints one JSON line per step.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.synthetic_fleet import Fleet  # noqa: E402

STEPS = ("previous", "ingest", "judge", "site", "site-judge", "full")


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(code: Path, *argv: str) -> tuple[float, float]:
    """A fresh `build.py` of ``code``: seconds on the clock and on its CPU (exit 1 is judge's regression)."""
    began, cpu = time.perf_counter(), _cpu()
    done = subprocess.run([sys.executable, "build.py", *argv], cwd=code, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"build.py {' '.join(argv[:2])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return round(time.perf_counter() - began, 1), round(_cpu() - cpu, 1)


def night(store: str, files: list[Path], site: Path, code: Path, steps: list[str]) -> dict[str, list[float]]:
    commands = {
        "ingest": ("results", "ingest", *map(str, files), "--store", store, "--skip-duplicates"),
        "judge": ("results", "judge", "--store", store, "--json"),
        "site": ("site", "--store", store, "--out", str(site)),
        "site-judge": ("site", "--judge", "--store", store, "--out", str(site)),
        "full": ("site", "--store", store, "--out", f"{site}-full", "--full"),
    }
    numbers: dict[str, list[float]] = {}
    for step in steps:
        if step == "previous":
            previous = [timed(code, *commands["judge"]), timed(code, *commands["site"])]
            numbers[step] = [sum(t[0] for t in previous), sum(t[1] for t in previous)]
        else:
            numbers[step] = list(timed(code, *commands[step]))
        print(json.dumps({"step": step, "clock_s": numbers[step][0], "cpu_s": numbers[step][1]}), flush=True)
    return numbers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="a store holding nights 0 to --night - 1")
    parser.add_argument("--night", type=int, required=True, help="the number of the night to time")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose build.py runs (default: this)")
    parser.add_argument("--site-out", type=Path, help="last night's site (default: a temporary folder)")
    parser.add_argument("--steps", default="previous,ingest,judge,site", help=f"of {','.join(STEPS)}")
    parser.add_argument("--gpus", type=int, default=20)
    parser.add_argument("--variants", type=int, default=6)
    args = parser.parse_args()
    steps = args.steps.split(",")
    if not set(steps) <= set(STEPS):
        raise SystemExit(f"--steps {args.steps}: each step is one of {', '.join(STEPS)}")
    with tempfile.TemporaryDirectory(prefix="store-night-") as tmp:
        files = Fleet(args.gpus, args.variants).write_files(Path(tmp) / "night", range(args.night, args.night + 1))
        night(args.store, files, args.site_out or Path(tmp) / "site", args.code.resolve(), steps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
