"""An image's config as its registry serves it: the config digest an image manifest names (the image ID), the
config itself (checked against that digest: labels, the layers' diff_ids), and what a tag serves for linux/amd64."""

from __future__ import annotations

import json
from typing import Any

from pytorch_cuda.oci.registry_client import (
    RegistryAccessError,
    RegistryClient,
    RegistryManifest,
    open_image,
    reference,
)

INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")


def config_digest(raw: bytes) -> str | None:
    """The config digest an image manifest names; None for an index (one config per platform) or no config."""
    config = json.loads(raw).get("config")
    digest = config.get("digest") if isinstance(config, dict) else None
    return digest if isinstance(digest, str) and digest else None


def image_config(client: RegistryClient, repository: str, digest: str) -> dict[str, Any]:
    """The config blob `digest` of `repository`, its bytes checked against the digest."""
    config: dict[str, Any] = json.loads(client.blob(reference(f"{repository}:x"), digest))
    return config


def amd64_manifest(client: RegistryClient, text: str, manifest: RegistryManifest) -> RegistryManifest:
    """The linux/amd64 image manifest of `manifest` (itself when it is one image, its entry when an index)."""
    if manifest.media_type not in INDEX_TYPES:
        return manifest
    entries = json.loads(manifest.raw).get("manifests", [])
    amd64 = [
        e
        for e in entries
        if e.get("platform", {}).get("os") == "linux" and e.get("platform", {}).get("architecture") == "amd64"
    ]
    if not amd64:
        raise RegistryAccessError(cause=f"{text} has no linux/amd64 image", fix="name a tag that has one")
    found = client.manifest(f"{reference(text).repository}@{amd64[0]['digest']}")
    if found is None:
        raise RegistryAccessError(cause=f"{text}'s linux/amd64 manifest is missing", fix="try again later")
    return found


def resolve_tag(text: str) -> tuple[str, str]:
    """What `text` (a tag) serves now on its registry: (manifest digest, linux/amd64 image ID)."""
    client, manifest = open_image(text)
    config = config_digest(amd64_manifest(client, text, manifest).raw)
    if config is None:
        raise RegistryAccessError(cause=f"{text}'s manifest names no config", fix="name an image, not an artifact")
    return manifest.digest, config
