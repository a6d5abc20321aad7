"""`build.py site` on the committed store, charts drawn the old way (matplotlib) and the new (SVG written
directly), side by side in one run (issue 49, item 6).

    .venv/bin/python benchmarks/site_build.py [--runs N]

It stores every committed run as scripts/decay-evidence.sh does (into a temporary folder, by running it), then
builds the whole site N times with each chart writer, alternating (old, new, old, new, ...), each time into a new,
empty output folder in a fresh process (so matplotlib's import and font cache are paid as `build.py site` pays
them), and checks that every GPU page holds one SVG per chart. It prints the median and range of each and writes
build-output/site-build.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build-output" / "site-build.json"
WRITERS = {
    "matplotlib (before)": "benchmarks.site_chart_matplotlib",
    "SVG written directly (after)": "pytorch_cuda.site.chart",
}
# One build in a fresh process: prints the seconds it took (imports included) and the number of SVG charts.
PROBE = r"""
import sys, time
began = time.perf_counter()
import importlib
from pathlib import Path
from pytorch_cuda.site.site_writer import build_site
chart = importlib.import_module(sys.argv[1]).history_chart
build_site(Path(sys.argv[2]), Path(sys.argv[3]), chart)
seconds = time.perf_counter() - began
charts = sum(p.read_text().count("<svg") for p in Path(sys.argv[3]).glob("gpu/*.html"))
print(seconds, charts)
"""


def _build(module: str, store: Path, out: Path) -> tuple[float, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module, str(store), str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    seconds, charts = done.stdout.split()
    return float(seconds), int(charts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="builds with each chart writer (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        subprocess.run(["scripts/decay-evidence.sh", str(store)], cwd=ROOT, check=True, capture_output=True)
        runs = len(list((store / "runs").glob("*/*.json")))
        times: dict[str, list[float]] = {name: [] for name in WRITERS}
        charts: dict[str, set[int]] = {name: set() for name in WRITERS}
        for n in range(args.runs):
            for name, module in WRITERS.items():
                seconds, count = _build(module, store, Path(tmp) / f"site-{n}-{module}")
                times[name].append(seconds)
                charts[name].add(count)
    rows = []
    for name, taken in times.items():
        rows.append(
            {
                "charts": name,
                "median_s": statistics.median(taken),
                "min_s": min(taken),
                "max_s": max(taken),
                "svg_charts": sorted(charts[name]),
                "seconds": taken,
            }
        )
        print(
            f"{name:30} median {statistics.median(taken):6.2f} s (min {min(taken):.2f}, max {max(taken):.2f}; "
            f"{args.runs} builds), {sorted(charts[name])} SVG charts on the GPU pages"
        )
    print(f"store: every committed run ({runs} runs), as scripts/decay-evidence.sh stores them")
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps({"store_runs": runs, "rows": rows, "measured": time.strftime("%Y-%m-%d")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
