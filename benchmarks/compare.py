"""Measure pytorch-cuda against the naive Dockerfile, row by row, in one run; write JSON and a Markdown table.

    flock /tmp/pytorch-cuda-docker.lock .venv/bin/python benchmarks/compare.py [--readme]

It clones HEAD into build-output/bench/tree (tags go to pytorch-cuda-bench:*, so the real tags
never move), then: a cold build of each (--no-cache), a rebuild after bumping numpy in each, our
no-op rebuild and our rebuild after editing one conformance file; image sizes, duplicated sonames
and the bytes an update must move after the bump. Results: build-output/benchmark.json and
benchmarks/RESULTS.md; with --readme also the README's "Measured" section. It starts by pruning the
engine's layer cache (`docker builder prune -af --filter type=regular`) and keeps the download caches
(the cache mounts) warm: otherwise a bump could rebuild on a previous run's layers, and its new-layer
bytes and times would be a previous run's, not this one's. Other builds then start cold too.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker

from benchmarks.page_writer import parser, write_page
from benchmarks.table import README_END, README_START, duplicate_sonames, markdown, new_layer_bytes
from pytorch_cuda.network.ca_bundle import find_ca_bundle

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build-output" / "bench"
TREE = WORK / "tree"
REPO = "pytorch-cuda-bench"
NAIVE = f"{REPO}:naive"
MARKERS = (README_START, README_END)


class StepFailedError(Exception):
    """A command the benchmark runs failed; carries what it printed, so the run ends with the cause."""


def sh(*argv: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(argv, cwd=cwd, check=False, text=True, capture_output=True, env=env)
    if result.returncode != 0:
        said = (result.stderr.strip() or result.stdout.strip())[-3000:]
        raise StepFailedError(f"`{' '.join(argv)}` exited {result.returncode}:\n{said}")
    return result.stdout


def commit(message: str) -> None:
    sh("git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qam", message, cwd=TREE)


def prepare_tree() -> None:
    shutil.rmtree(TREE, ignore_errors=True)
    WORK.mkdir(parents=True, exist_ok=True)
    sh("git", "clone", "-q", "--no-hardlinks", str(ROOT), str(TREE))
    matrix = TREE / "matrix.yaml"
    matrix.write_text(matrix.read_text().replace("repository: pytorch-cuda\n", f"repository: {REPO}\n"))
    commit("benchmark: tag into pytorch-cuda-bench")


def ours(*extra: str) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    out = sh(sys.executable, "build.py", "--target", "cu12", "--json", "--progress", "quiet", *extra, cwd=TREE)
    return round(time.monotonic() - started, 1), json.loads(out)


def naive(requirements: str, *extra: str) -> float:
    ca = find_ca_bundle(None)
    secret = ["--secret", f"id=pip_ca,src={ca.path}"] if ca else []
    argv = ["/usr/bin/docker", "build", "-q", "-f", str(ROOT / "benchmarks/naive.Dockerfile"), "-t", NAIVE]
    argv += [*secret, "--build-arg", f"REQUIREMENTS={requirements}", *extra, str(TREE)]
    started = time.monotonic()
    sh(*argv, env={**os.environ, "DOCKER_BUILDKIT": "1"})
    return round(time.monotonic() - started, 1)


def history(client: docker.DockerClient, ref: str) -> list[tuple[str, int]]:
    entries = reversed(client.api.history(ref))
    return [(f"{e.get('CreatedBy', '')}@{e.get('Created', 0)}", int(e.get("Size", 0))) for e in entries]


def image_facts(client: docker.DockerClient, ref: str) -> dict[str, Any]:
    find = "find / -xdev -type f -name 'lib*.so*' 2>/dev/null; true"
    listing = sh("/usr/bin/docker", "run", "--rm", "--user", "0", "--entrypoint", "sh", ref, "-c", find)
    dupes = duplicate_sonames(listing.split())
    return {"size_bytes": client.images.get(ref).attrs["Size"], "duplicate_sonames": dupes}


def bump_numpy(to: str) -> str:
    matrix = TREE / "matrix.yaml"
    before = re.search(r'numpy: "([^"]+)"', matrix.read_text())
    matrix.write_text(re.sub(r'numpy: "[^"]+"', f'numpy: "{to}"', matrix.read_text()))
    sh(sys.executable, "build.py", "render", cwd=TREE)
    sh(sys.executable, "build.py", "lock", "--target", "cu12", cwd=TREE)
    commit(f"benchmark: numpy {to}")
    return before.group(1) if before else "?"


def save(report: dict[str, Any]) -> None:
    """Write what is measured so far (a run that dies keeps its rows)."""
    out = ROOT / "build-output" / "benchmark.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")


def prune_layer_cache() -> None:
    """Drop every layer the build cache holds; keep the cache mounts (pip's and uv's downloads)."""
    sh("/usr/bin/docker", "builder", "prune", "-af", "--filter", "type=regular")


def run(numpy_to: str) -> dict[str, Any]:
    client = docker.from_env(timeout=900)
    prepare_tree()
    prune_layer_cache()
    report: dict[str, Any] = {"host": platform.node(), "cpus": len(os.sched_getaffinity(0)), "naive": {}, "ours": {}}
    n, o = report["naive"], report["ours"]
    requirements = "images/cu128-runtime/requirements.txt"
    n["cold_s"] = naive(requirements, "--no-cache")
    n.update(image_facts(client, NAIVE))
    naive_before = history(client, NAIVE)
    save(report)
    o["cold_s"], first = ours("--no-cache", "--recheck")
    o["cold_timings"] = first["timings"]
    o.update(image_facts(client, first["tags"][0]))
    ours_before = history(client, first["tags"][0])
    save(report)
    o["noop_s"], noop = ours()
    o["noop_checks_reused"] = bool(noop["checks"] and noop["checks"].get("reused"))
    o["noop_same_image"] = noop["image_id"] == first["image_id"]
    save(report)
    suite_file = TREE / "conformance" / "conftest.py"
    suite_file.write_text(suite_file.read_text() + "\n# benchmark: one edited line\n")
    commit("benchmark: edit one conformance file")
    o["suite_edit_s"], edited = ours()
    o["suite_edit_timings"] = edited["timings"]
    save(report)
    previous = bump_numpy(numpy_to)
    report["bump"] = f"numpy {previous} -> {numpy_to}"
    o["bump_s"], bumped = ours()
    o["bump_timings"] = bumped["timings"]
    after = history(client, bumped["tags"][0])
    o["bump_new_layer_bytes"] = new_layer_bytes(ours_before, after)
    save(report)
    n["bump_s"] = naive(requirements)
    n["bump_new_layer_bytes"] = new_layer_bytes(naive_before, history(client, NAIVE))
    report["notes"] = [
        f"Measured by benchmarks/compare.py on {report['cpus']} cores; {report['bump']}. Cold builds use "
        "an empty layer cache (pruned first) and --no-cache, with the download caches (cache mounts) warm. "
        "Update bytes are the uncompressed layers the bumped image has and the old one lacks."
    ]
    for ref in [NAIVE, *first["tags"]]:
        subprocess.run(["/usr/bin/docker", "rmi", "-f", ref], capture_output=True, check=False)
    return report


def main() -> int:
    options = parser(__doc__, "Measured")
    options.add_argument("--numpy-to", default="2.5.4", help="the version the bump rows move numpy to")
    args = options.parse_args()
    if args.from_json:
        report = json.loads(args.from_json.read_text())
    else:
        try:
            report = run(args.numpy_to)
        except StepFailedError as exc:
            print(f"benchmark stopped: {exc}\nThe rows measured so far: build-output/benchmark.json", file=sys.stderr)
            return 1
        save(report)
        shutil.copy(ROOT / "build-output" / "benchmark.json", ROOT / "benchmarks" / "results.json")
    write_page(markdown(report), ROOT / "benchmarks" / "RESULTS.md", "Measured", MARKERS if args.readme else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
