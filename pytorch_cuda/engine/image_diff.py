"""What differs between two images, in the style of diffoci: the layers (by position and the instruction that
made them) and, in each differing layer, the first files whose content, mode, owner or time differ.

It reads both images through `docker save` (all their bytes: minutes for a CUDA image), so it runs only when
two builds that should be one image are not.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import docker

from pytorch_cuda.engine.image_times import _Stream

Entry = tuple[str, ...]  # type, mode, uid:gid, mtime, size, link, content sha256


@dataclass(frozen=True)
class LayerDifference:
    index: int  # 0-based position in the image's layers
    created_by: str
    files: tuple[str, ...]  # "path: what differs", the first few


def _entry(member: tarfile.TarInfo, data: IO[bytes] | None) -> Entry:
    digest = hashlib.sha256()
    if data is not None:
        for chunk in iter(lambda: data.read(1 << 20), b""):
            digest.update(chunk)
    return (
        member.type.decode(),
        oct(member.mode),
        f"{member.uid}:{member.gid}",
        str(int(member.mtime)),
        str(member.size),
        member.linkname,
        digest.hexdigest() if data is not None else "",
    )


def _layers(client: docker.DockerClient, image_id: str) -> tuple[list[dict[str, Entry]], list[str]]:
    """Each layer's files (in the image's order) and the instruction behind each layer."""
    by_dir: dict[str, dict[str, Entry]] = {}
    layer_names: list[str] = []
    history: list[dict[str, object]] = []
    with tarfile.open(fileobj=_Stream(client.images.get(image_id).save()), mode="r|") as outer:
        for member in outer:
            handle = outer.extractfile(member) if member.isfile() else None
            if handle is None:
                continue
            if member.name.endswith("/layer.tar"):
                with tarfile.open(fileobj=handle, mode="r|") as layer:
                    by_dir[member.name] = {
                        inner.name: _entry(inner, layer.extractfile(inner) if inner.isfile() else None)
                        for inner in layer
                    }
            elif member.name == "manifest.json":
                layer_names = [str(name) for name in json.loads(handle.read())[0]["Layers"]]
            elif member.name.endswith(".json") and "/" not in member.name:
                history = list(json.loads(handle.read()).get("history", []))
    names = [str(entry.get("created_by", "")) for entry in history if not entry.get("empty_layer")]
    return [by_dir.get(name, {}) for name in layer_names], names


def _what(left: Entry, right: Entry) -> str:
    fields = ("type", "mode", "owner", "mtime", "size", "link", "content")
    return ", ".join(f"{name} {a} != {b}" for name, a, b in zip(fields, left, right, strict=True) if a != b)


def _file_differences(left: dict[str, Entry], right: dict[str, Entry], limit: int) -> Iterator[str]:
    shown = 0
    for path in sorted(left.keys() | right.keys()):
        if shown >= limit:
            return
        a, b = left.get(path), right.get(path)
        if a == b:
            continue
        shown += 1
        if a is None or b is None:
            yield f"{path}: only in the {'second' if a is None else 'first'} image"
        else:
            yield f"{path}: {_what(a, b)}"


def diff_images(client: docker.DockerClient, first: str, second: str, limit: int = 10) -> list[LayerDifference]:
    """The layers that differ between two images and, for each, the first ``limit`` files that differ."""
    left, names = _layers(client, first)
    right, _ = _layers(client, second)
    differences = []
    for index in range(max(len(left), len(right))):
        a = left[index] if index < len(left) else {}
        b = right[index] if index < len(right) else {}
        if a != b:
            name = names[index] if index < len(names) else "?"
            differences.append(LayerDifference(index, name, tuple(_file_differences(a, b, limit))))
    return differences
