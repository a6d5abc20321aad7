"""`import torch` with the image's checked-hash .pyc files beside unchecked-hash ones (issue 40), in one run.

    .venv/bin/python benchmarks/pyc_import_cost.py [--image pytorch-cuda:v2.9] [--runs N]

PEP 552's two hash-based forms: checked (what the image ships: the import system reads and hashes each source it
imports, so an edited source still takes effect) and unchecked (the source is not read; an edit is ignored until
the .pyc is rewritten). In one container of the image, as its user, it times `python -c "import torch"` N times
with the shipped .pyc files, recompiles site-packages to unchecked-hash, times it N times, recompiles back to
checked-hash and times it N times again (checked, unchecked, checked: drift in the host's load shows as a gap
between the two checked rounds). Each round starts with one untimed import (the page cache). It prints a table and
writes build-output/pyc-import-cost.json; the numbers of 2026-12-06 are in benchmarks/pyc_import_cost.json and
docs/release.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build-output" / "pyc-import-cost.json"
# Runs inside the container: prints one JSON object with each round's import times in seconds.
PROBE = r"""
import json, subprocess, sys, sysconfig, time
site = sysconfig.get_paths()["purelib"]
runs = int(sys.argv[1])
def round_of(name):
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        times.append(time.perf_counter() - began)
    return {"form": name, "seconds": times}
def recompile(mode):
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-f", "-j0", "--invalidation-mode", mode, site],
                   check=True, stdout=subprocess.DEVNULL)
rounds = [round_of("checked-hash")]
recompile("unchecked-hash")
rounds.append(round_of("unchecked-hash"))
recompile("checked-hash")
rounds.append(round_of("checked-hash"))
print(json.dumps(rounds))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default="pytorch-cuda:v2.9")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    command = ["docker", "run", "--rm", "--entrypoint", "python", args.image, "-c", PROBE, str(args.runs)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.stderr.write(f"`docker run {args.image}` exited {result.returncode}:\n{result.stderr[-3000:]}\n")
        return 1
    rounds = json.loads(result.stdout.strip().splitlines()[-1])
    print(f"`import torch` in {args.image}, {args.runs} runs a round (median, min, max; seconds)")
    for n, entry in enumerate(rounds, 1):
        times = entry["seconds"]
        print(f"  round {n}, {entry['form']:>14}: {statistics.median(times):.3f} ({min(times):.3f}, {max(times):.3f})")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"image": args.image, "runs": args.runs, "rounds": rounds}, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
