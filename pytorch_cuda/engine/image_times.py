"""Stamp an image's config with SOURCE_DATE_EPOCH: its `created` and every history entry's.

The engine's BuildKit (Docker 20.10, BuildKit 0.8) writes the wall clock there and has no SOURCE_DATE_EPOCH
support (that came with BuildKit 0.11, which needs buildx here). The layers are already reproducible (every
RUN clamps its mtimes), so only the config differs between two builds. `docker load` of a tar that holds only
the new config and a manifest makes the stamped image: the engine has every layer already (by chain ID), so
nothing is read or copied and the load takes well under a second, where a save/rewrite/load of the 7.5 GB
image would take minutes.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import docker

from pytorch_cuda.errors import EngineError


def rfc3339(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp_config(raw: bytes, epoch: int) -> bytes:
    """The config with `created` and each history entry's `created` set to the epoch, as canonical JSON."""
    config = json.loads(raw)
    when = rfc3339(epoch)
    config["created"] = when
    for entry in config.get("history", []):
        entry["created"] = when
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def config_only_tar(config: bytes, layer_count: int) -> bytes:
    """A `docker save` tar holding only the config and the manifest (the layers are named, not included)."""
    name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = [{"Config": name, "RepoTags": None, "Layers": [f"{i}/layer.tar" for i in range(layer_count)]}]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for member, data in ((name, config), ("manifest.json", json.dumps(manifest).encode())):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def raw_config(client: docker.DockerClient, image_id: str) -> bytes:
    """The image's config exactly as stored: from the engine's image store where this process can read it
    (a local engine, as root), else from a `docker save` stream (reads the whole image: slow, but right)."""
    info = client.info()
    hex_id = image_id.removeprefix("sha256:")
    stored = Path(str(info.get("DockerRootDir"))) / "image" / str(info.get("Driver")) / "imagedb/content/sha256"
    try:
        data = (stored / hex_id).read_bytes()
    except OSError:
        data = b""
    if data and hashlib.sha256(data).hexdigest() == hex_id:
        return data
    with tarfile.open(fileobj=_Stream(client.images.get(image_id).save()), mode="r|") as tar:
        for member in tar:
            if member.name == f"{hex_id}.json":
                handle = tar.extractfile(member)
                if handle is not None:
                    return handle.read()
    raise EngineError(
        cause=f"the engine's save of {image_id} holds no config {hex_id}.json",
        fix="check the engine (`docker image inspect`), then build again",
    )


def stamp_image(client: docker.DockerClient, image_id: str, epoch: int) -> str:
    """The ID of the image with its config stamped with the epoch (made if not here yet)."""
    raw = raw_config(client, image_id)
    config = stamp_config(raw, epoch)
    stamped = "sha256:" + hashlib.sha256(config).hexdigest()
    if stamped != image_id:
        layers = len(json.loads(config)["rootfs"]["diff_ids"])
        client.images.load(config_only_tar(config, layers))
    return stamped


def stamp_and_retag(client: docker.DockerClient, image_id: str, epoch: int, ref: str) -> str:
    """Stamp the image tagged `ref`, point `ref` at the stamped one, and remove the unstamped one (BuildKit's or
    `docker import`'s wall-clock config; it shares every layer, so only its config goes), which would otherwise be
    left dangling by every build. Returns the stamped ID."""
    stamped = stamp_image(client, image_id, epoch)
    if stamped == image_id:
        return stamped
    client.images.get(stamped).tag(ref)
    try:
        if not client.images.get(image_id).tags:  # a tag that someone else put on it keeps it
            client.images.remove(image_id, noprune=False)
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.APIError as exc:
        if exc.status_code != 409:  # in use by a container: it stays, untagged
            raise
    return stamped


class _Stream(io.RawIOBase):
    """A file-like view of the chunks `docker save` streams."""

    def __init__(self, chunks: object) -> None:
        self._chunks = iter(chunks)  # type: ignore[call-overload]
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._buffer:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size
