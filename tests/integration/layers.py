"""Scan `docker save` output for bytes that must never be in an image (the host's CA bundle)."""

from __future__ import annotations

import hashlib
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

import docker

_PEM = re.compile(rb"-----BEGIN CERTIFICATE-----\s+(.+?)\s+-----END CERTIFICATE-----", re.S)


def _bodies(bundle: bytes) -> list[bytes]:
    return [b"".join(match.group(1).split()) for match in _PEM.finditer(bundle)]


def private_certificates(host_bundle: bytes, image_bundles: bytes) -> list[bytes]:
    """Needles for the host's certificates that the image does not legitimately carry itself.

    Each needle is 64 base64 characters from the signature at the end of the
    certificate's body: unique to that certificate (its issuer and subject lines
    are not: a CA's old and new certificates share them), and verbatim in any PEM
    copy of it that keeps the usual 64-character lines.
    """
    public = set(_bodies(image_bundles))
    needles = []
    for body in _bodies(host_bundle):
        if body not in public and len(body) > 192:
            end = len(body) - len(body) % 64  # the last full 64-character line ends here
            needles.append(body[end - 128 : end - 64])
    return needles


@dataclass
class ScanResult:
    layers: int = 0
    bytes_read: int = 0
    hits: list[str] = field(default_factory=list)


class _Stream:
    """A file-like view over docker's chunk iterator, for tarfile's streaming mode."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._buffer = b""

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._buffer) < size:
            try:
                self._buffer += next(self._chunks)
            except StopIteration:
                break
        if size < 0:
            data, self._buffer = self._buffer, b""
        else:
            data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data


def _scan_file(
    stream: IO[bytes], name: str, whole: tuple[int, str], needles: list[bytes], result: ScanResult, *, size: int
) -> None:
    """Look for the needles in one file; hash it only when its size is the bundle's (a copy must have it)."""
    whole_size, whole_digest = whole
    digest = hashlib.sha256() if size in (whole_size, -1) else None
    tail = b""
    overlap = max((len(n) for n in needles), default=1)
    while chunk := stream.read(1 << 20):
        result.bytes_read += len(chunk)
        if digest is not None:
            digest.update(chunk)
        window = tail + chunk
        for needle in needles:
            if needle in window:
                result.hits.append(f"{name}: certificate line {needle[:16].decode(errors='replace')}...")
        tail = window[-overlap:]
    if digest is not None and digest.hexdigest() == whole_digest:
        result.hits.append(f"{name}: a byte-identical copy of the host CA bundle")


def scan_saved_image(client: docker.DockerClient, ref: str, *, whole_file: bytes, needles: list[bytes]) -> ScanResult:
    result = ScanResult()
    whole = (len(whole_file), hashlib.sha256(whole_file).hexdigest())
    stream = _Stream(iter(client.images.get(ref).save(chunk_size=1 << 20)))
    outer = tarfile.open(fileobj=stream, mode="r|")  # type: ignore[call-overload]  # noqa: SIM115
    for member in outer:
        if not member.isfile():
            continue
        layer = outer.extractfile(member)
        if layer is None:
            continue
        if member.name.endswith("layer.tar") or member.name.startswith("blobs/"):
            result.layers += 1
            try:
                inner = tarfile.open(fileobj=layer, mode="r|")  # noqa: SIM115 - closed with the outer stream
                for entry in inner:
                    if entry.isfile():
                        content = inner.extractfile(entry)
                        if content is not None:
                            _scan_file(content, f"{member.name}:{entry.name}", whole, needles, result, size=entry.size)
            except tarfile.ReadError:
                _scan_file(layer, member.name, whole, needles, result, size=-1)  # a config or other blob
        else:
            _scan_file(layer, member.name, whole, needles, result, size=member.size)
    return result
