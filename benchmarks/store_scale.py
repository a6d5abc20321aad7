"""The results store at scale (issue 55): a synthetic fleet's history ingested once, then one more night timed
(ingest, judge, and the site when asked), on each backend, side by side.

    .venv/bin/python benchmarks/store_scale.py --runs 1000 --gpus 20 --variants 6 [--site] [--backend sqlite]
        [--postgres postgresql://USER@HOST:PORT/DB]   (a server to make a new database on, for backend postgres)

The history is a real H100 run (evidence/) copied night by night for every GPU model x variant, every watched
number scaled by its own seeded noise (1% normal, 2% for conv, SDPA and compile, 3% for compile times), a new
image digest each night, two hosts per GPU model. It is ingested once, in one call (not timed); then the next
night (one run per GPU model x variant) is timed as the nightly runs it, each command in a fresh process of
`build.py` (its import included): `results ingest --skip-duplicates`, `results judge` (on each history's window,
decay/windowed.py, kept by an untimed judge of the history before, as last night's nightly keeps it), `site`.
Beside it, the naive judge: every history read and judged whole (decay.judge_each), in this process. It prints a
table and writes build-output/store-scale.json.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BASE = ROOT / "evidence/fleet-runs/h100/2026-12-05T18-27Z.json"
OUT = ROOT / "build-output" / "store-scale.json"
GPUS = ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA L4", "NVIDIA L40S",
        "NVIDIA B200", "Tesla T4", "NVIDIA A10G", "NVIDIA RTX 6000 Ada Generation", "NVIDIA GH200 480GB",
        "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA A100-SXM4-40GB", "NVIDIA A100 80GB PCIe", "NVIDIA L40",
        "NVIDIA B100", "NVIDIA GB200", "NVIDIA RTX A6000", "NVIDIA A30", "NVIDIA H800")  # fmt: skip
VARIANTS = ("cu126", "cu128", "cu129", "cu130", "cu128-py311", "cu130-py313")
BACKENDS = {"files": "store", "sqlite": "store.sqlite", "postgres": ""}


def _spread(metric: str) -> float:
    if "compile_s" in metric:
        return 0.03
    return 0.02 if metric.startswith(("conv.", "sdpa.", "compile.")) else 0.01


def run_document(base: dict[str, Any], gpu: int, variant: int, day: int, rng: random.Random) -> dict[str, Any]:
    document = copy.deepcopy(base)
    started = time.gmtime(1_767_225_600 + day * 86_400 + gpu * 60 + variant)  # 2026-01-01 + day
    document["started_at"] = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", started)
    for name, measured in document["measurements"].items():
        factor = rng.gauss(1.0, _spread(name))
        for field in ("value", "median", "min", "max"):
            if isinstance(measured.get(field), int | float) and not isinstance(measured.get(field), bool):
                measured[field] *= factor
    host = f"{GPUS[gpu]}-{day % 2}"
    document["environment"]["host"] = {"sha256": hashlib.sha256(host.encode()).hexdigest()[:16], "source": "hostname"}
    for card in document["environment"]["gpus"]:
        card["name"], card["uuid"] = GPUS[gpu], f"GPU-{host}"
    digest = "sha256:" + hashlib.sha256(f"{VARIANTS[variant]}-{day}".encode()).hexdigest()
    document["image"] = {"digest": digest, "revision": None, "ref": f"ghcr.io/o/pytorch-cuda@{digest}"}
    document["manifest"] = {"path": "/etc/pytorch-cuda/manifest.json", "origin": "default", "found": True,
                            "error": None, "content": {"target": VARIANTS[variant], "flavour": "runtime"}}  # fmt: skip
    return document


def write_nights(folder: Path, days: range, gpus: int, variants: int) -> list[Path]:
    base = json.loads(BASE.read_text(encoding="utf-8"))
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for day in days:
        for gpu in range(gpus):
            for variant in range(variants):
                rng = random.Random(f"{day}-{gpu}-{variant}")
                path = folder / f"{day:05d}-{gpu}-{variant}.json"
                path.write_text(json.dumps(run_document(base, gpu, variant, day, rng)), encoding="utf-8")
                paths.append(path)
    return paths


def _timed(*argv: str) -> float:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "build.py", *argv], cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # judge exits 1 on a confirmed regression
        raise SystemExit(f"build.py {' '.join(argv[:2])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - began


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


def measure(
    backend: str, history: list[Path], night: list[Path], work: Path, *, site: bool, postgres: str | None
) -> dict[str, float]:
    from pytorch_cuda.decay import judge_each
    from pytorch_cuda.decay.windowed import judge_windowed
    from pytorch_cuda.run_store import ingest
    from pytorch_cuda.run_store.backend import open_store

    if backend == "postgres" and not postgres:
        raise SystemExit("--backend postgres needs --postgres postgresql://USER@HOST:PORT/DB (a server to use)")
    store = _new_database(postgres) if backend == "postgres" and postgres else str(work / BACKENDS[backend])
    location = store if backend == "postgres" else Path(store)
    began = time.perf_counter()
    ingest(history, location)
    numbers = {"history_ingest_s": time.perf_counter() - began}
    judge_windowed(open_store(location))  # last night's judge: it keeps each history's window
    numbers["night_ingest_s"] = _timed("results", "ingest", *map(str, night), "--store", store, "--skip-duplicates")
    numbers["judge_s"] = _timed("results", "judge", "--store", store, "--json")
    began = time.perf_counter()
    judge_each(open_store(location))
    numbers["judge_full_read_s"] = time.perf_counter() - began
    if site:
        numbers["site_s"] = _timed("site", "--store", store, "--out", str(work / f"site-{backend}"))
    return numbers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs in the history before the timed night")
    parser.add_argument("--gpus", type=int, default=20, help=f"GPU models (at most {len(GPUS)})")
    parser.add_argument("--variants", type=int, default=6, help=f"variants (at most {len(VARIANTS)})")
    parser.add_argument("--backend", action="append", choices=sorted(BACKENDS), help="default: every backend")
    parser.add_argument("--site", action="store_true", help="also time the site (about 0.2 s per stored run)")
    parser.add_argument("--postgres", metavar="URI", help="a PostgreSQL server for backend postgres (a new database)")
    args = parser.parse_args()
    per_night = args.gpus * args.variants
    days = max(1, args.runs // per_night)
    results: dict[str, Any] = {"runs": days * per_night, "per_night": per_night, "backends": {}}
    with tempfile.TemporaryDirectory(prefix="store-scale-") as tmp:
        work = Path(tmp)
        history = write_nights(work / "history", range(days), args.gpus, args.variants)
        night = write_nights(work / "night", range(days, days + 1), args.gpus, args.variants)
        chosen = args.backend or [b for b in BACKENDS if b != "postgres" or args.postgres]
        for backend in chosen:
            (work / backend).mkdir()
            results["backends"][backend] = measure(
                backend, history, night, work / backend, site=args.site, postgres=args.postgres
            )
            print(backend, json.dumps(results["backends"][backend]), flush=True)
    print(f"\n{results['runs']} runs stored ({per_night} a night), then one more night:")
    print("| backend | history ingest (once) | night ingest | judge (window) | judge (full read, naive) | site |")
    print("|---|---|---|---|---|---|")
    for backend, n in results["backends"].items():
        site = f"{n['site_s']:.1f} s" if "site_s" in n else "not run"
        print(f"| {backend} | {n['history_ingest_s']:.1f} s | {n['night_ingest_s']:.1f} s | {n['judge_s']:.1f} s "
              f"| {n['judge_full_read_s']:.1f} s | {site} |")  # fmt: skip
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
