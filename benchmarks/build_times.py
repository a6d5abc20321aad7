"""Measure the build: cold (no image, no build cache, optionally no base), warm rebuild, image size.

    .venv/bin/python benchmarks/build_times.py --target cu12 --cold [--cold-base]

Prints a table and writes build-output/benchmark-<target>.json. A cold run removes
this target's images and the whole BuildKit cache first (and with --cold-base the
bootstrapped base image too, so mmdebstrap runs again). Numbers are wall-clock
seconds on this machine; downloads dominate a cold build, so they depend on the
network as much as on the code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker

ROOT = Path(__file__).resolve().parents[1]


def build(target: str, *extra: str) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "--target", target, "--json", *extra],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"build.py --target {target} failed ({result.returncode}): {result.stdout}")
    data: dict[str, Any] = json.loads(result.stdout)
    return data, seconds


def make_cold(client: docker.DockerClient, tags: list[str], base: str | None) -> None:
    for ref in [*tags, *([base] if base else [])]:
        with contextlib.suppress(docker.errors.ImageNotFound):
            client.images.remove(ref, force=True)
    client.api.prune_builds()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="cu12")
    parser.add_argument("--cold", action="store_true", help="remove the images and the build cache first")
    parser.add_argument("--cold-base", action="store_true", help="with --cold: remove the base image too")
    args = parser.parse_args()
    client = docker.from_env(timeout=900)
    plan = json.loads(
        subprocess.run(
            [sys.executable, str(ROOT / "build.py"), "--target", args.target, "--dry-run", "--json"],
            stdout=subprocess.PIPE,
            text=True,
            check=True,
        ).stdout
    )
    report: dict[str, Any] = {"target": args.target, "host": platform.node(), "cpus": len(os.sched_getaffinity(0))}
    if args.cold:
        make_cold(client, plan["tags"], plan["base"]["image"] if args.cold_base else None)
        first, seconds = build(args.target)
        report["cold_seconds"] = round(seconds, 1)
        report["cold_timings"] = first["timings"]
        report["base"] = first["base"]["how"]
    again, seconds = build(args.target)
    report["rebuild_seconds"] = round(seconds, 1)
    report["rebuild_cached_steps"] = f"{again['cached_steps']}/{again['total_steps']}"
    report["image_id"] = again["image_id"]
    report["size_bytes"] = again["size_bytes"]
    report["size_gb"] = round(again["size_bytes"] / 1e9, 2)
    out = ROOT / "build-output" / f"benchmark-{args.target}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    width = max(len(k) for k in report)
    for key, value in report.items():
        print(f"{key.ljust(width)}  {value}")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
