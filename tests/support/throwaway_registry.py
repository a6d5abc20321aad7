"""A docker-registry of its own on a free loopback port, its storage in a folder that is removed after (the heavy
reads push blobs of several GB), and the registry edits an attacker with push access makes there: a synthetic blob
streamed in, a cosign `.sig` whose layers are replaced. The release tests' registry constants
(tests/support/local_registry.py) point at it while it runs."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import requests

from pytorch_cuda.release.cosign_layout import tag_for
from tests.support import local_registry
from tests.support.registry_server import docker_registry
from tests.support.release_checkout import OCI_MANIFEST

CHUNK = 1 << 20


@contextlib.contextmanager
def throwaway_registry(folder: Path) -> Iterator[str]:
    """docker-registry serving on 127.0.0.1:<free port> (registry_server.docker_registry), storing under
    `folder`/registry-data (removed after); local_registry's REGISTRY_HOST and REGISTRY name it meanwhile. Yields
    the host."""
    data = folder / "registry-data"
    saved = local_registry.REGISTRY_HOST, local_registry.REGISTRY
    try:
        with docker_registry(folder, data) as host:
            local_registry.REGISTRY_HOST, local_registry.REGISTRY = host, f"{host}/{local_registry.NAMESPACE}"
            yield host
    finally:
        local_registry.REGISTRY_HOST, local_registry.REGISTRY = saved
        shutil.rmtree(data, ignore_errors=True)


def push_streamed_blob(host: str, path: str, size: int) -> str:
    """A synthetic blob of `size` bytes, generated and hashed as it streams (chunked PATCH, then PUT ?digest=):
    never held in memory, here or in the registry."""
    digest = hashlib.sha256()
    block = hashlib.sha256(os.urandom(32)).digest() * (CHUNK // 32)

    def chunks() -> Iterator[bytes]:
        sent = 0
        while sent < size:
            piece = block[: min(CHUNK, size - sent)]
            digest.update(piece)
            sent += len(piece)
            yield piece

    started = requests.post(f"http://{host}/v2/{path}/blobs/uploads/", timeout=30)
    if started.status_code != 202:
        raise RuntimeError(f"upload refused: {started.status_code} {started.text}")
    location = started.headers["Location"]
    location = f"http://{host}{location}" if location.startswith("/") else location
    patched = requests.patch(location, data=chunks(), timeout=1800,
                             headers={"Content-Type": "application/octet-stream"})  # fmt: skip
    if patched.status_code != 202:
        raise RuntimeError(f"upload refused: {patched.status_code} {patched.text}")
    location = patched.headers["Location"]
    location = f"http://{host}{location}" if location.startswith("/") else location
    done = requests.put(location, params={"digest": f"sha256:{digest.hexdigest()}"}, timeout=1800)
    if done.status_code != 201:
        raise RuntimeError(f"upload refused: {done.status_code} {done.text}")
    return f"sha256:{digest.hexdigest()}"


def sig_layers(host: str, path: str, digest: str) -> list[dict[str, object]]:
    """The layers of the image's cosign `.sig` as the registry serves them."""
    url = f"http://{host}/v2/{path}/manifests/{tag_for(digest, 'sig')}"
    return list(requests.get(url, headers={"Accept": OCI_MANIFEST}, timeout=30).json()["layers"])


def put_sig(host: str, path: str, digest: str, layers: list[dict[str, object]]) -> None:
    """Replace the image's .sig with `layers` (the registry's tag is writable by anyone who can push)."""
    url = f"http://{host}/v2/{path}/manifests/{tag_for(digest, 'sig')}"
    document = requests.get(url, headers={"Accept": OCI_MANIFEST}, timeout=30).json()
    document["layers"] = layers
    pushed = requests.put(url, data=json.dumps(document).encode(), headers={"Content-Type": OCI_MANIFEST}, timeout=60)
    if pushed.status_code != 201:
        raise RuntimeError(f"the .sig was not replaced: {pushed.status_code} {pushed.text}")
