"""Small OCI images for the release tests, pushed through the loopback registry's HTTP API (no engine, no build):
each a real image manifest with a config (labels, rootfs.diff_ids) and one uncompressed tar layer of its own, on
top of the layers of a given base, as `FROM base` + `COPY` would make it. skopeo, oras-py and the release code
read them as they read any image."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import uuid
from dataclasses import dataclass

import requests

from tests.support import local_registry as registry

SOURCE = "https://github.com/pytorch-cuda/pytorch-cuda"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"


@dataclass(frozen=True)
class Blob:
    data: bytes

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Image:
    digest: str  # the manifest's, as the registry serves it
    config: str  # the image ID: the sha256 of its config
    layers: tuple[Blob, ...]  # base first

    def pinned(self, repository: str) -> str:
        return f"{repository}@{self.digest}"


def _path(repository: str) -> str:
    return repository.removeprefix(f"{registry.REGISTRY_HOST}/")


def push_blob(repository: str, blob: Blob) -> None:
    base = f"http://{registry.REGISTRY_HOST}/v2/{_path(repository)}/blobs"
    started = requests.post(f"{base}/uploads/", timeout=30)
    assert started.status_code == 202, started.text
    location = started.headers["Location"]
    if location.startswith("/"):
        location = f"http://{registry.REGISTRY_HOST}{location}"
    done = requests.put(location, params={"digest": blob.digest}, data=blob.data, timeout=30,
                        headers={"Content-Type": "application/octet-stream"})  # fmt: skip
    assert done.status_code == 201, done.text


def _layer(text: str) -> Blob:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        data = text.encode()
        info = tarfile.TarInfo(f"layer-{uuid.uuid4().hex[:8]}.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return Blob(buffer.getvalue())


def push_image(
    repository: str, tag: str, revision: str, base: Image | None = None, *, claimed_base: Image | None = None
) -> Image:
    """Push `repository:tag`: the base's layers (their blobs too), then one layer of its own, labelled with the
    source and `revision` as build.py labels its images; return its digests. `claimed_base`: an attacker's image
    whose config claims that base's layers (rootfs.diff_ids) while its manifest serves other blobs."""
    layers = (*(base.layers if base else ()), _layer(f"{revision} {uuid.uuid4()}\n"))
    claimed = [layer.digest for layer in layers]
    if claimed_base is not None:
        claimed = [*(layer.digest for layer in claimed_base.layers), *claimed[len(claimed_base.layers) :]]
    labels = {"org.opencontainers.image.source": SOURCE, "org.opencontainers.image.revision": revision}
    config = Blob(json.dumps({
        "architecture": "amd64", "os": "linux", "config": {"Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": claimed},
        "history": [{"created_by": f"COPY layer {n}"} for n in range(len(layers))],
    }, sort_keys=True).encode())  # fmt: skip
    for blob in (*layers, config):
        push_blob(repository, blob)
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, "digest": config.digest, "size": len(config.data)},
        "layers": [{"mediaType": OCI_LAYER_TAR, "digest": b.digest, "size": len(b.data)} for b in layers],
    }).encode()  # fmt: skip
    url = f"http://{registry.REGISTRY_HOST}/v2/{_path(repository)}/manifests/{tag}"
    pushed = requests.put(url, data=manifest, headers={"Content-Type": OCI_MANIFEST}, timeout=30)
    assert pushed.status_code == 201, pushed.text
    digest = "sha256:" + hashlib.sha256(manifest).hexdigest()
    assert pushed.headers["Docker-Content-Digest"] == digest
    return Image(digest, config.digest, layers)
