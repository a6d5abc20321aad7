"""Scan an image's layers for bytes that must never be in one (the host's CA bundle).

Two scanners with one result: `scan_layer_dirs` reads the engine's own layer directories (overlay2's
`diff` dirs, found through the engine's API: one per layer, whiteouts and files deleted by a later
layer included, exactly what the layer tarballs hold) with GNU grep's fixed-string search, one grep
per layer on every core: seconds for the 7.5 GB image. `scan_saved_image` streams `docker save`
through Python (about a minute for it); it is the way for engines whose layers cannot be read here
(another storage driver, a remote engine, no permission). `scan_image` picks.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
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
    method: str = "docker save"


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


def layer_dirs(client: docker.DockerClient, ref: str) -> list[Path] | None:
    """The image's layer directories, lowest first, when the engine is overlay2 and they are readable here."""
    attrs = client.images.get(ref).attrs
    driver = attrs.get("GraphDriver") or {}
    if driver.get("Name") != "overlay2":
        return None
    data = driver.get("Data") or {}
    lower = [Path(d) for d in str(data.get("LowerDir") or "").split(":") if d]
    dirs = [*reversed(lower), Path(str(data.get("UpperDir") or ""))]
    if len(dirs) != len(attrs["RootFS"]["Layers"]) or not all(os.access(d, os.R_OK | os.X_OK) for d in dirs):
        return None
    return dirs


PEM_HEADER = b"-----BEGIN CERTIFICATE-----"


def _grep(directory: Path, *args: str) -> set[str]:
    """Files under `directory` that grep lists (fixed strings, byte semantics); its errors fail the scan."""
    done = subprocess.run(
        ["grep", "-lF", "--devices=skip", "--null", *args],
        cwd=directory, capture_output=True, timeout=600, env={**os.environ, "LC_ALL": "C"},
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise RuntimeError(f"grep in {directory} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    return {name.decode(errors="replace") for name in done.stdout.split(b"\0") if name}


def _needle_files(directory: Path, patterns: Path) -> set[str]:
    """Files holding a needle, at grep's speed: every text file is searched for the needles (-I skips binary
    files after their first block); a binary file only when it holds a PEM header, which a PEM copy of a
    certificate carries. (A single fixed string runs about ten times faster than the 15 needles together.)"""
    texts = _grep(directory, "-rI", "-f", str(patterns), ".")
    pem = _grep(directory, "-ra", "-e", PEM_HEADER.decode(), ".") - texts
    return texts | (_grep(directory, "-a", "-f", str(patterns), "--", *sorted(pem)) if pem else set())


def _files(directory: Path) -> list[tuple[int, Path]]:
    """Every regular file under `directory` with its size (one walk, by find)."""
    listed = subprocess.run(
        ["find", ".", "-type", "f", "-printf", "%s %p\\0"], cwd=directory, capture_output=True, check=True
    ).stdout
    pairs = (entry.decode(errors="replace").split(" ", 1) for entry in listed.split(b"\0") if entry)
    return [(int(size), Path(name)) for size, name in pairs]


def scan_layer_dirs(dirs: list[Path], *, whole_file: bytes, needles: list[bytes]) -> ScanResult:
    result = ScanResult(layers=len(dirs), method="overlay2 layer directories, grep -F")
    digest = hashlib.sha256(whole_file).hexdigest()
    with tempfile.TemporaryDirectory() as tmp:
        patterns = Path(tmp) / "needles"
        patterns.write_bytes(b"".join(needle + b"\n" for needle in needles))
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            found = pool.map(lambda d: sorted(_needle_files(d, patterns)) if needles else [], dirs)
            listings = pool.map(_files, dirs)
            for layer, (directory, names, files) in enumerate(zip(dirs, found, listings, strict=True)):
                result.hits += [f"layer {layer}:{name}: a certificate line of the host bundle" for name in names]
                result.bytes_read += sum(size for size, _ in files)
                for size, name in files:
                    if (
                        size == len(whole_file)
                        and hashlib.sha256((directory / name).read_bytes()).hexdigest() == digest
                    ):
                        result.hits.append(f"layer {layer}:{name}: a byte-identical copy of the host CA bundle")
    return result


def scan_image(client: docker.DockerClient, ref: str, *, whole_file: bytes, needles: list[bytes]) -> ScanResult:
    dirs = layer_dirs(client, ref)
    if dirs is None:
        return scan_saved_image(client, ref, whole_file=whole_file, needles=needles)
    return scan_layer_dirs(dirs, whole_file=whole_file, needles=needles)
