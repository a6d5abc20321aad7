"""The results store at scale (issue 55): a synthetic fleet's history (benchmarks/synthetic_fleet.py) stored in bulk,
then one more night timed as the nightly runs it, on each backend, at each size, the store grown from one size
to the next.

    .venv/bin/python benchmarks/store_scale.py --sizes 1000,10000,44000 [--gpus 20 --variants 6]
        [--backend sqlite] [--postgres postgresql://USER@HOST:PORT/DB] [--site-up-to 44000]
        [--files-up-to 10000] [--timeout 1200]

For each backend (a folder of files, SQLite, PostgreSQL: a new database on the server --postgres names) and each
size: the nights up to it are stored in bulk (printed as it goes, not timed), last night's judge runs (not timed:
it keeps each history's window, decay/windowed.py, as the nightly before this one did), then the next night
(one run per GPU model x variant) is timed, each command a fresh `build.py` process, its import included:
`results ingest --skip-duplicates`, `results judge`, and up to --site-up-to runs the site twice: `site --full` into
a new folder, and `site` into the folder of last night's site (built before the night's ingest, not timed), which
rewrites only the pages whose inputs changed (pytorch_cuda/site/page_inputs.py); each on the clock and on
the CPU (the process's own user + system time: what a machine busy with other work does not stretch, and what
it would take alone; a PostgreSQL server's own time is not in it). A command that runs past
--timeout is stopped and shown as "> N s". The folder is measured up to --files-up-to runs (every command of it
reads the whole store). It prints a table per size and writes build-output/store-scale.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.synthetic_fleet import GPUS, VARIANTS, Fleet, bulk_store  # noqa: E402

OUT = ROOT / "build-output" / "store-scale.json"
BACKENDS = {"files": "store", "sqlite": "store.sqlite", "postgres": ""}
COMMANDS = ("ingest_s", "judge_s", "site_s", "site_incremental_s")
NIGHT = ("ingest_s", "judge_s")  # and the incremental site where it was timed, else the full one


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(timeout: float, *argv: str) -> tuple[float, float]:
    """Seconds a fresh `build.py` took, on the clock and on the CPU (its own, not a database server's; what a busy
    machine does not stretch); ``-timeout``: stopped after ``timeout``."""
    began, cpu = time.perf_counter(), _cpu()
    try:
        done = subprocess.run([sys.executable, "build.py", *argv], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        return -timeout, _cpu() - cpu
    if done.returncode not in (0, 1):  # judge exits 1 on a confirmed regression
        raise SystemExit(f"build.py {' '.join(argv[:2])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - began, _cpu() - cpu


def _new_database(server: str) -> str:
    """A new database on the PostgreSQL server ``server`` names: its URI."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"store_scale_{int(time.time() * 1000)}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    parts = conninfo_to_dict(server)
    user = f"{parts.get('user', '')}:{parts['password']}" if parts.get("password") else parts.get("user", "")
    return f"postgresql://{user}@{parts.get('host', '')}:{parts.get('port', 5432)}/{name}"


def _night(
    location: Path | str, store: str, night: list[Path], work: Path, *, site: bool, timeout: float
) -> dict[str, float]:
    from pytorch_cuda.decay.windowed import judge_windowed
    from pytorch_cuda.run_store.backend import open_store

    began = time.perf_counter()
    judge_windowed(open_store(location))  # last night's judge: it keeps each history's window
    numbers = {"previous_judge_s": time.perf_counter() - began}
    print(f"  last night's judge (not timed): {numbers['previous_judge_s']:.0f} s", flush=True)
    if site:  # last night's site, where tonight's incremental build starts from
        shutil.rmtree(work / "site", ignore_errors=True)
        numbers["previous_site_s"], _ = _timed(timeout, "site", "--store", store, "--out", str(work / "site"))
        print(f"  last night's site (not timed): {numbers['previous_site_s']:.0f} s", flush=True)
    shutil.rmtree(work / "site-full", ignore_errors=True)
    commands = {"ingest": ("results", "ingest", *map(str, night), "--store", store, "--skip-duplicates"),
                "judge": ("results", "judge", "--store", store, "--json"),
                "site": ("site", "--store", store, "--out", str(work / "site-full"), "--full"),
                "site_incremental": ("site", "--store", store, "--out", str(work / "site"))}  # fmt: skip
    for name, argv in commands.items():
        if not name.startswith("site") or site:
            numbers[f"{name}_s"], numbers[f"{name}_cpu_s"] = _timed(timeout, *argv)
    print("  night: " + ", ".join(f"{k} {v:.1f}" for k, v in numbers.items()), flush=True)
    return numbers


def measure(
    backend: str, fleet: Fleet, sizes: list[int], work: Path, *, args: argparse.Namespace, everything: dict[str, Any]
) -> None:
    """Grow one store of ``backend`` through ``sizes``, timing the night after each (into ``everything``, written to
    OUT after each size)."""
    store = _new_database(args.postgres) if backend == "postgres" else str(work / BACKENDS[backend])
    location: Path | str = store if backend == "postgres" else Path(store)
    per_night, day = fleet.gpus * fleet.variants, 0
    for size in sizes:
        if backend == "files" and size > args.files_up_to:
            break
        days = range(day, max(day + 1, size // per_night))
        print(f"{backend}: {len(days) * per_night:,} runs in bulk (nights {days.start}-{days.stop - 1})", flush=True)
        began = time.perf_counter()
        bulk_store(fleet, location, days)
        night = fleet.write_files(work / f"night-{days.stop}", range(days.stop, days.stop + 1))
        bulk_s = time.perf_counter() - began
        timed = _night(location, store, night, work, site=size <= args.site_up_to, timeout=args.timeout)
        everything[backend][size] = {"stored": days.stop * per_night, "bulk_s": bulk_s, **timed}
        day = days.stop + 1
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps({"per_night": per_night, "backends": everything}, indent=1) + "\n")


def _seconds(value: float | None, cpu: float | None = None) -> str:
    if value is None:
        return "not run"
    on_cpu = "" if cpu is None else f" (CPU {cpu:.1f} s)"
    return (f"> {-value:.0f} s" if value < 0 else f"{value:.1f} s") + on_cpu


def table(results: dict[str, Any], per_night: int) -> str:
    lines = [f"| runs stored | backend | night ingest ({per_night} runs) | judge | site, full | site, incremental "
             "| night total (incremental site) |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    sizes = sorted({int(size) for by_size in results.values() for size in by_size})
    for size in sizes:
        for backend, by_size in results.items():
            n = by_size.get(size) or by_size.get(str(size))
            if n is None:
                continue
            times = [n.get(c) for c in COMMANDS]
            cpus = [n.get(c.replace("_s", "_cpu_s")) for c in COMMANDS]
            site = "site_incremental_s" if n.get("site_incremental_s") is not None else "site_s"
            parts = [n.get(c) for c in (*NIGHT, site)]
            part_cpus = [n.get(c.replace("_s", "_cpu_s")) for c in (*NIGHT, site)]
            total = None if None in parts else (sum(parts) if all(t >= 0 for t in parts) else -sum(map(abs, parts)))
            cpu = None if None in part_cpus or total is None else sum(part_cpus)
            lines.append(f"| {n['stored']:,} | {backend} | " + " | ".join(map(_seconds, times, cpus))
                         + f" | {_seconds(total, cpu)} |")  # fmt: skip
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,44000", help="runs stored before each timed night")
    parser.add_argument("--gpus", type=int, default=20, help=f"GPU models (at most {len(GPUS)})")
    parser.add_argument("--variants", type=int, default=6, help=f"variants (at most {len(VARIANTS)})")
    parser.add_argument("--backend", action="append", choices=sorted(BACKENDS), help="default: every backend")
    parser.add_argument("--postgres", metavar="URI", help="a PostgreSQL server for backend postgres (a new database)")
    parser.add_argument("--site-up-to", type=int, default=44_000, help="time the site up to this many runs")
    parser.add_argument("--files-up-to", type=int, default=10_000, help="measure the folder up to this many runs")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds a timed command may take")
    parser.add_argument("--work", type=Path, help="where the stores go (default: a temporary folder)")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    fleet = Fleet(args.gpus, args.variants)
    chosen = args.backend or [b for b in BACKENDS if b != "postgres" or args.postgres]
    if "postgres" in chosen and not args.postgres:
        raise SystemExit("--backend postgres needs --postgres postgresql://USER@HOST:PORT/DB (a server to use)")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="store-scale-", dir=args.work) as tmp:
        for backend in chosen:
            (Path(tmp) / backend).mkdir()
            results[backend] = {}
            measure(backend, fleet, sizes, Path(tmp) / backend, args=args, everything=results)
    print(f"\n{fleet.gpus} GPU models x {fleet.variants} variants; one more night timed:")
    print(table(results, fleet.gpus * fleet.variants))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
