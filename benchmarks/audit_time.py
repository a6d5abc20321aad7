"""`build.py audit`, cold and warm, before and after the issue-53 speed-ups, side by side in one run.

    .venv/bin/python benchmarks/audit_time.py [--baseline COMMIT] [--rounds N]

It clones the baseline (default: e539dc4, main before issue 53's round-three speed-ups: a TLS context made, and a
connection opened, for every HTTPS read; pip-audit's pins in rounds, a second round of a few pins after the first;
the project-JSON fallback only after every pip-audit run ended; the round-two baseline was f672d78) and HEAD into
build-output/bench/audit-*, and in each round runs `build.py audit --json` in both clones,
alternating which goes first: cold (a new, empty XDG_CACHE_HOME, so pip-audit's cache is empty) and then warm
(the same cache again). Every run reads PyPI and deb.debian.org for real. It prints a table of the medians and
writes build-output/audit-time.json (each run's wall time, exit status and number of findings; both trees must
find the same advisories). The numbers it gave here are in docs/security.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build-output" / "bench"


def _clone(commit: str, name: str) -> Path:
    path = WORK / name
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "--quiet", commit], check=True)
    return path


def _audit(tree: Path, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(tree / "build.py"), "audit", "--json"], cwd=tree, env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    found = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
    ids = sorted({alias for f in found.get("findings", []) for alias in (f["id"], *f["aliases"])})
    return {"seconds": round(seconds, 2), "status": done.returncode, "findings": len(found.get("findings", [])),
            "ids": ids, "pins": found.get("pins")}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="e539dc4", help="the commit to compare with (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=2, help="cold-then-warm rounds per tree (default: 2)")
    args = parser.parse_args()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    trees = {"before": _clone(args.baseline, "audit-before"), "after": _clone(head.stdout.strip(), "audit-after")}
    runs: dict[str, list[dict[str, Any]]] = {f"{tree} {kind}": [] for tree in trees for kind in ("cold", "warm")}
    for number in range(args.rounds):
        order = list(trees.items()) if number % 2 == 0 else list(reversed(trees.items()))
        for name, tree in order:
            with tempfile.TemporaryDirectory(prefix="audit-cache-") as cache:
                for kind in ("cold", "warm"):
                    run = _audit(tree, Path(cache))
                    runs[f"{name} {kind}"].append(run)
                    print(f"round {number + 1} {name} {kind}: {run['seconds']} s, exit {run['status']}, "
                          f"{run['findings']} findings", flush=True)  # fmt: skip
    ids = {tuple(run["ids"]) for group in runs.values() for run in group}
    medians = {key: statistics.median(run["seconds"] for run in group) for key, group in runs.items()}
    print("\n| run | median s | runs |\n|---|---|---|")
    for key, group in runs.items():
        print(f"| {key} | {medians[key]:.1f} | {', '.join(str(run['seconds']) for run in group)} |")
    print(f"same advisory ids in every run: {len(ids) == 1}")
    out = ROOT / "build-output" / "audit-time.json"
    load = os.getloadavg()
    out.write_text(json.dumps({"baseline": args.baseline, "head": head.stdout.strip(), "host": platform.node(),
                               "cpus": os.cpu_count(), "load_after": load, "medians": medians, "runs": runs},
                              indent=2) + "\n", encoding="utf-8")  # fmt: skip
    return 0 if len(ids) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
