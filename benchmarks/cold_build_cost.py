"""The cold cu12 build before and after reproducible images (issue 40), side by side in one run.

    .venv/bin/python benchmarks/cold_build_cost.py [--baseline COMMIT] [--rounds N]

It clones the baseline (default: 00b3158, main just before issue 40 was merged) and HEAD into
build-output/bench/cold-*, and in each clone's matrix.yaml tags into pytorch-cuda-bench-cold and names the base
pytorch-cuda-bench-base/debian:trixie (so no real tag and not the shared base moves); HEAD's clone also takes
matrix.yaml's SOURCE_DATE_EPOCH plus one second (re-rendered): at the real time its layers would equal the
engine's pytorch-cuda:v2.9, and Docker 20.10 keeps the directory of an identical rebuilt layer (7.5 GB a run).
The bench base is bootstrapped first, untimed, and both trees build on it. Then each round builds cu12 in both
clones with `--no-cache --skip-checks` (every step again; the download caches, cache mounts with the same IDs in
both trees, stay warm), alternating which goes first, and removes each image and its build cache records before
the next. It prints a table and writes build-output/cold-build-cost.json: each build's wall time, BuildKit's build
time and image ID (HEAD's are one ID in every round; the baseline's differ). The numbers of 2026-12-06 are in
benchmarks/cold_build_cost.json and docs/release.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker

from pytorch_cuda.engine.build_cache import cache_records, drop_build_cache
from pytorch_cuda.engine.build_client import find_build_client
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.steps.base_image import ensure_base

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build-output" / "bench"
REPOSITORY = "pytorch-cuda-bench-cold"
BASE = "pytorch-cuda-base/debian:trixie"
BENCH_BASE = "pytorch-cuda-bench-base/debian:trixie"
BASELINE = "00b3158"  # main just before `Merge branch 'issue-40'` (1e00796^1)
OUT = ROOT / "build-output" / "cold-build-cost.json"


def sh(*argv: str, cwd: Path = ROOT) -> str:
    result = subprocess.run(argv, cwd=cwd, check=False, text=True, capture_output=True)
    if result.returncode != 0:
        raise SystemExit(f"`{' '.join(argv)}` exited {result.returncode}:\n{(result.stderr or result.stdout)[-3000:]}")
    return result.stdout


def prepare(name: str, commit: str, *, shift_epoch: bool) -> Path:
    """A clone at `commit` whose matrix tags into the bench repository on the bench base."""
    tree = WORK / f"cold-{name}"
    shutil.rmtree(tree, ignore_errors=True)
    WORK.mkdir(parents=True, exist_ok=True)
    sh("git", "clone", "-q", "--no-hardlinks", str(ROOT), str(tree))
    sh("git", "checkout", "-q", commit, cwd=tree)
    matrix = tree / "matrix.yaml"
    text = matrix.read_text().replace("repository: pytorch-cuda\n", f"repository: {REPOSITORY}\n")
    text = text.replace(f"image: {BASE}\n", f"image: {BENCH_BASE}\n")
    if shift_epoch:
        epoch = load_matrix(matrix).project.source_date_epoch
        text = text.replace(f"source_date_epoch: {epoch}\n", f"source_date_epoch: {epoch + 1}\n")
    matrix.write_text(text)
    sh(sys.executable, "build.py", "render", cwd=tree)
    sh("git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qam", "bench", cwd=tree)
    return tree


def cold_build(client: docker.DockerClient, tree: Path) -> dict[str, Any]:
    """One cold build of cu12 in `tree`; its tags and build cache records are removed afterwards."""
    before = frozenset(cache_records(client))
    started = time.monotonic()
    argv = [sys.executable, "build.py", "--target", "cu12", "--no-cache", "--skip-checks", "--json"]
    out = json.loads(sh(*argv, "--progress", "quiet", cwd=tree))
    wall = round(time.monotonic() - started, 1)
    for ref in out["tags"]:
        subprocess.run(["/usr/bin/docker", "rmi", ref], capture_output=True, check=False)
    dropped = drop_build_cache(client, before, tree / "images" / "cu128-runtime" / "Dockerfile")
    return {
        "wall_s": wall,
        "build_s": out["timings"]["build"],
        "image_id": out["image_id"],
        "cached_steps": out.get("cached_steps"),
        "cache_records_removed": dropped.records,
    }


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    options.add_argument("--baseline", default=BASELINE, help="the commit before reproducible images")
    options.add_argument("--rounds", type=int, default=1, help="builds of each tree, alternating the order")
    args = options.parse_args()
    client = docker.from_env(timeout=900)
    head = sh("git", "rev-parse", "--short", "HEAD").strip()
    trees = {
        "baseline": prepare("baseline", args.baseline, shift_epoch=False),
        "head": prepare("head", head, shift_epoch=True),
    }
    matrix = load_matrix(trees["head"] / "matrix.yaml")
    engine = DockerEngine(client, find_build_client())
    ensure_base(engine, matrix.bases[matrix.default_base], source_date_epoch=matrix.project.source_date_epoch)
    report: dict[str, Any] = {
        "host": platform.node(),
        "cpus": len(os.sched_getaffinity(0)),
        "commits": {"baseline": args.baseline, "head": head},
        "builds": [],
    }
    for round_ in range(args.rounds):
        for name in ("baseline", "head") if round_ % 2 == 0 else ("head", "baseline"):
            built = {"tree": name, "round": round_ + 1, **cold_build(client, trees[name])}
            report["builds"].append(built)
            print(json.dumps(built), flush=True)
            OUT.write_text(json.dumps(report, indent=2) + "\n")
    subprocess.run(["/usr/bin/docker", "rmi", BENCH_BASE], capture_output=True, check=False)
    for name in ("baseline", "head"):
        walls = [b["wall_s"] for b in report["builds"] if b["tree"] == name]
        builds = [b["build_s"] for b in report["builds"] if b["tree"] == name]
        print(f"{name:9} wall {sum(walls) / len(walls):6.1f} s  BuildKit {sum(builds) / len(builds):6.1f} s  {walls}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
