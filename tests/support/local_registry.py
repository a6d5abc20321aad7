"""The local registry the push tests use (scripts/setup-registry.sh starts it): its HTTP API, read directly."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import pytest
import requests

REGISTRY_HOST = "127.0.0.1:5000"
NAMESPACE = "ci"
REGISTRY = f"{REGISTRY_HOST}/{NAMESPACE}"
MANIFEST_TYPES = ", ".join(
    (
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.oci.image.index.v1+json",
    )
)


@dataclass(frozen=True)
class Manifest:
    digest: str  # sha256 of the bytes the registry served
    served_digest: str  # its Docker-Content-Digest header
    body: dict[str, Any]

    @property
    def config_digest(self) -> str:
        return str(self.body["config"]["digest"])

    @property
    def layers(self) -> list[dict[str, Any]]:
        return list(self.body["layers"])


def answers() -> str | None:
    """None when the registry answers on /v2/, else why not."""
    try:
        response = requests.get(f"http://{REGISTRY_HOST}/v2/", timeout=5)
    except requests.RequestException as exc:
        return str(exc)
    return None if response.status_code == 200 else f"HTTP {response.status_code}"


def require_registry() -> None:
    """Fail the test when the registry does not answer, naming the script that starts it."""
    why = answers()
    if why is not None:
        pytest.fail(f"no registry answers on http://{REGISTRY_HOST}/v2/ ({why}): run scripts/setup-registry.sh")


def manifest(repository: str, reference: str) -> Manifest:
    """GET /v2/<repository>/manifests/<tag or digest> (repository without the host)."""
    response = requests.get(
        f"http://{REGISTRY_HOST}/v2/{repository}/manifests/{reference}", headers={"Accept": MANIFEST_TYPES}, timeout=30
    )
    response.raise_for_status()
    return Manifest(
        "sha256:" + hashlib.sha256(response.content).hexdigest(),
        response.headers.get("Docker-Content-Digest", ""),
        json.loads(response.content),
    )


def blob_size(repository: str, digest: str) -> int | None:
    """HEAD /v2/<repository>/blobs/<digest>: its size, or None when the registry does not have it."""
    response = requests.head(f"http://{REGISTRY_HOST}/v2/{repository}/blobs/{digest}", timeout=30)
    return int(response.headers["Content-Length"]) if response.status_code == 200 else None


def blob_digest(repository: str, digest: str) -> tuple[str, int]:
    """GET a blob, streamed: the sha256 digest and size of what the registry served."""
    hasher = hashlib.sha256()
    size = 0
    with requests.get(f"http://{REGISTRY_HOST}/v2/{repository}/blobs/{digest}", stream=True, timeout=300) as response:
        response.raise_for_status()
        for chunk in response.iter_content(chunk_size=4 * 1024 * 1024):
            hasher.update(chunk)
            size += len(chunk)
    return "sha256:" + hasher.hexdigest(), size
