"""Measure pulls through a registry, side by side with the naive image: a first pull, and the update
pull after a small pin bump (the previous image present), in one run; write JSON and a Markdown table.

    flock /tmp/pytorch-cuda-docker.lock .venv/bin/python -m benchmarks.pulls [--readme]

Run it after benchmarks/compare.py, whose tree (build-output/bench/tree) holds the numpy bump as its
last commit. From that tree it rebuilds four images (from the build cache: seconds): ours and the naive
one, before and after the bump. It pushes them to REGISTRY/bench-<time>/{ours,naive}:{old,new} (the
loopback registry of scripts/setup-registry.sh by default; a new repository each run, so every layer is
really uploaded), then removes every local image that shares a layer with them, the base's layers
excepted, and the engine's layer cache, which holds the same layers (the download caches stay). The
pytorch-cuda tags go too, and it names them: build them again with build.py. Then it times
`docker pull` of old (only the base present) and of new (old present). Bytes are the compressed layer
sizes in the registry's manifests.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import urllib.request
from typing import Any

import docker

from benchmarks.compare import NAIVE, REPO, ROOT, TREE, naive, ours, prune_layer_cache, sh
from benchmarks.page_writer import parser, write_page
from benchmarks.pull_table import MARKERS, compressed_bytes, markdown, update_bytes

DOCKER = "/usr/bin/docker"
REQUIREMENTS = "images/cu128-runtime/requirements.txt"
MANIFEST_TYPES = "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json"


def timed(*argv: str) -> float:
    started = time.monotonic()
    sh(*argv)
    return round(time.monotonic() - started, 1)


def manifest(registry: str, name: str, tag: str) -> dict[str, Any]:
    request = urllib.request.Request(f"http://{registry}/v2/{name}/manifests/{tag}", headers={"Accept": MANIFEST_TYPES})
    with urllib.request.urlopen(request, timeout=60) as response:
        loaded: dict[str, Any] = json.loads(response.read())
    return loaded


def build_pair() -> dict[str, dict[str, str]]:
    """Our image and the naive one at the tree's commit before the bump (old) and at the bump (new)."""
    bump = sh("git", "rev-parse", "HEAD", cwd=TREE).strip()
    refs: dict[str, dict[str, str]] = {"ours": {}, "naive": {}}
    for when, commit in (("old", f"{bump}~1"), ("new", bump)):
        sh("git", "checkout", "-q", commit, cwd=TREE)
        _, built = ours()
        refs["ours"][when] = f"{REPO}:ours-{when}"
        sh(DOCKER, "tag", built["tags"][0], refs["ours"][when])
        naive(REQUIREMENTS)
        refs["naive"][when] = f"{REPO}:naive-{when}"
        sh(DOCKER, "tag", NAIVE, refs["naive"][when])
    sh("git", "checkout", "-q", bump, cwd=TREE)
    return refs


def layers(client: docker.DockerClient, ref: str) -> set[str]:
    return set(client.images.get(ref).attrs["RootFS"]["Layers"])


def clear_engine(client: docker.DockerClient, refs: list[str], base: str) -> list[str]:
    """Remove every image sharing a non-base layer with `refs`; return the tags that went."""
    keep = layers(client, base)
    wanted = set().union(*(layers(client, ref) for ref in refs)) - keep
    gone: list[str] = []
    for image in client.images.list():
        if set(image.attrs["RootFS"]["Layers"]) & wanted:
            gone += image.tags
            client.images.remove(image.id, force=True)
    client.images.prune(filters={"dangling": True})
    prune_layer_cache()  # BuildKit's layer cache keeps the same layers alive: a pull would download nothing
    return sorted(gone)


def measure(registry: str, client: docker.DockerClient, base: str) -> dict[str, Any]:
    refs = build_pair()
    report: dict[str, Any] = {"registry": registry, "naive": {}, "ours": {}, "removed_tags": []}
    run = f"bench-{int(time.time())}"
    for kind in ("naive", "ours"):
        side = report[kind]
        remote = {when: f"{registry}/{run}/{kind}:{when}" for when in ("old", "new")}
        ids = {when: client.images.get(refs[kind][when]).id for when in ("old", "new")}
        for when in ("old", "new"):
            sh(DOCKER, "tag", refs[kind][when], remote[when])
            # Untimed: the engine remembers blobs it pushed before and mounts them across repositories.
            sh(DOCKER, "push", remote[when])
        old, new = manifest(registry, f"{run}/{kind}", "old"), manifest(registry, f"{run}/{kind}", "new")
        side["compressed_bytes"] = compressed_bytes(new)
        side["update_bytes"] = update_bytes(old, new)
        report["removed_tags"] += clear_engine(client, [remote["old"], remote["new"]], base)
        side["first_pull_s"] = timed(DOCKER, "pull", "-q", remote["old"])
        side["update_pull_s"] = timed(DOCKER, "pull", "-q", remote["new"])
        side["pulled_same_images"] = [client.images.get(remote[w]).id == ids[w] for w in ("old", "new")]
        print(f"{kind}: {json.dumps(side)}", file=sys.stderr, flush=True)
        clear_engine(client, [remote["old"], remote["new"]], base)
    report["notes"] = [
        f"Measured by benchmarks/pulls.py through {registry} (Debian's docker-registry on loopback) with Docker "
        "Engine 20.10: extraction, not the network, is most of a first pull. Update bytes are the compressed "
        "layers of the bumped image that the previous one lacks (from the registry's manifests). zstd layers "
        "were not tried: this engine pushes gzip only, and BuildKit's compression=zstd export needs buildx."
    ]
    return report


def main() -> int:
    options = parser(__doc__, "pulls")
    options.add_argument("--registry", default="127.0.0.1:5000", help="an insecure (HTTP) registry to push to")
    options.add_argument("--base", default="pytorch-cuda-base/debian:trixie", help="the base image both build on")
    args = options.parse_args()
    if args.from_json:
        report = json.loads(args.from_json.read_text())
    else:
        if not (TREE / ".git").exists():
            print(f"pulls: no benchmark tree at {TREE}; run `python -m benchmarks.compare` first", file=sys.stderr)
            return 2
        report = measure(args.registry, docker.from_env(timeout=1800), args.base)
        out = ROOT / "build-output" / "pulls.json"
        out.write_text(json.dumps(report, indent=2) + "\n")
        shutil.copy(out, ROOT / "benchmarks" / "pulls.json")
        if report["removed_tags"]:
            print(
                "pulls: removed (build them again with build.py): " + " ".join(report["removed_tags"]), file=sys.stderr
            )
    write_page(markdown(report), ROOT / "benchmarks" / "PULLS.md", "Pulls", MARKERS if args.readme else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
