"""One more night on a store already built (issue 55): a 44,000-run store takes minutes to build, so this times a
night on a store that benchmarks/store_scale.py or synthetic_fleet.bulk_store left, and may time it with another
checkout's code (the previous code, side by side) on a copy of the same store.

    .venv/bin/python benchmarks/store_night.py --store PATH.sqlite|postgresql://... --night 366
        [--code CHECKOUT] [--site-out DIR] [--steps previous,ingest,judge,site|site-judge] [--gpus 20 --variants 6]
        [--window-move] [--put-back]

The night's runs (one per GPU model x variant, night number --night: the store holds nights 0 to --night - 1) are
written as results files, then each step is a fresh `build.py` process run from --code (default: this checkout), on
the clock and on the CPU (its own user + system time; a PostgreSQL server's is not in it): ``previous`` is last
night's judge and site (not part of the night: the judge keeps each history's window, decay/windowed.py, and the
site is what tonight's incremental build starts from), then ``ingest`` (`results ingest --skip-duplicates`),
``judge`` (`results judge --json`), ``site`` (`site` into --site-out, incremental over last night's),
``site-judge`` (`site --judge`: the judge and the site in one read, what the nightly runs instead of ``judge`` then
``site``) and ``full`` (`site --full` into a new folder). It prints one JSON line per step.

``--window-move`` times the night the judge's windows move instead (1 night in 21: the read passes
windowed.moves_after runs, and the judge judges the tail alone): the nights from --night up to the one before it are
stored in bulk first (not timed; the store must hold the windows last night's judge kept). ``--put-back`` deletes
the timed night's runs afterwards and restores the windows the judge kept before it, so that the same store times
the night again (with other code, or once more): a database only, as the site's folder is --site-out's to restore.
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
from benchmarks.synthetic_fleet import Fleet, bulk_store  # noqa: E402
from pytorch_cuda.decay.windowed import SHOWN_RUNS, WINDOW_RUNS, moves_after  # noqa: E402
from pytorch_cuda.run_store.backend import RunStore, open_store  # noqa: E402

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


def nights_to_move(store: RunStore) -> int:
    """How many nights come before the one on which the judge's windows next move (every history's read passes
    windowed.moves_after runs on it; the fewest over the histories), from the windows the store keeps."""
    reads = []
    for text in store.histories():
        kept = store.judge_window(text)
        if kept is None:
            raise SystemExit(f"--window-move: history {text} keeps no judge window; run `results judge` first")
        since = tuple(json.loads(kept)["since"])
        reads.append(sum(1 for head in store.heads(text) if (head.started_at, head.sha256) >= since))
    if not reads:
        raise SystemExit("--window-move: the store holds no history")
    return max(0, moves_after(WINDOW_RUNS, SHOWN_RUNS) - max(reads))


def _location(store: str) -> Path | str:
    return store if store.startswith(("postgresql://", "postgres://")) else Path(store)


def kept_windows(store: RunStore) -> dict[str, str | None]:
    return {text: store.judge_window(text) for text in store.histories()}


def put_back(store: RunStore, shas: list[str], windows: dict[str, str | None]) -> None:
    """Delete the runs ``shas`` (and their judge views) and keep ``windows`` as the judge's windows again."""
    writing = getattr(store, "_writing", None)
    mark = getattr(store, "MARK", None)
    if writing is None or mark is None:
        raise SystemExit("--put-back: only a database store (SQLite or PostgreSQL) can be put back")
    with writing() as db:
        for sha in shas:
            db.execute(f"DELETE FROM judge_views WHERE sha256 = {mark}", (sha,))
            db.execute(f"DELETE FROM runs WHERE sha256 = {mark}", (sha,))
        db.execute("DELETE FROM judge_windows")
        for text, document in windows.items():
            if document is not None:
                db.execute(f"INSERT INTO judge_windows (history, document) VALUES ({mark}, {mark})", (text, document))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="a store holding nights 0 to --night - 1")
    parser.add_argument("--night", type=int, required=True, help="the number of the night to time")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose build.py runs (default: this)")
    parser.add_argument("--site-out", type=Path, help="last night's site (default: a temporary folder)")
    parser.add_argument("--steps", default="previous,ingest,judge,site", help=f"of {','.join(STEPS)}")
    parser.add_argument("--gpus", type=int, default=20)
    parser.add_argument("--variants", type=int, default=6)
    parser.add_argument("--window-move", action="store_true", help="time the night the judge's windows move")
    parser.add_argument("--put-back", action="store_true", help="delete the night's runs after, restore the windows")
    args = parser.parse_args()
    steps = args.steps.split(",")
    if not set(steps) <= set(STEPS):
        raise SystemExit(f"--steps {args.steps}: each step is one of {', '.join(STEPS)}")
    fleet, location, number = Fleet(args.gpus, args.variants), _location(args.store), args.night
    if args.window_move:
        before = nights_to_move(open_store(location))
        bulk_store(fleet, location, range(number, number + before), every=10**9)
        number += before
        print(json.dumps({"stored_in_bulk": before, "night": number}), flush=True)
    windows = kept_windows(open_store(location)) if args.put_back else {}
    with tempfile.TemporaryDirectory(prefix="store-night-") as tmp:
        files = fleet.write_files(Path(tmp) / "night", range(number, number + 1))
        night(args.store, files, args.site_out or Path(tmp) / "site", args.code.resolve(), steps)
    if args.put_back:
        shas = [row[0] for row, _ in fleet.entries(range(number, number + 1))]
        put_back(open_store(location), [str(sha) for sha in shas], windows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
