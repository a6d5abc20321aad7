"""A wheel's METADATA read over HTTP range requests, for an index that serves no PEP 658 metadata file.

PyPI's torch wheels are about 900 MB and have no `.metadata` beside them; a zip's directory is at its end,
so a few range requests read the one member bump needs (as pip's lazy wheel does).
"""

from __future__ import annotations

import io
import urllib.request
import zipfile
from pathlib import Path

from pytorch_cuda.errors import EngineError
from pytorch_cuda.tls import tls_context


class _RangeReader(io.RawIOBase):
    """A read-only, seekable file whose bytes are fetched with HTTP Range requests."""

    def __init__(self, url: str, ca: Path | None) -> None:
        super().__init__()
        self.url = url
        self.context = tls_context(ca)
        self.position = 0
        head = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "pytorch-cuda-build"})
        with urllib.request.urlopen(head, timeout=60, context=self.context) as response:
            self.size = int(response.headers["Content-Length"])
            ranges = response.headers.get("Accept-Ranges", "")
        if ranges != "bytes":
            raise OSError(f"{url} does not accept range requests")

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        start = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, start + offset)
        return self.position

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]  # RawIOBase's buffer type
        end = min(self.size, self.position + len(buffer)) - 1
        if end < self.position:
            return 0
        request = urllib.request.Request(
            self.url, headers={"Range": f"bytes={self.position}-{end}", "User-Agent": "pytorch-cuda-build"}
        )
        with urllib.request.urlopen(request, timeout=60, context=self.context) as response:
            data = response.read()
        buffer[: len(data)] = data
        self.position += len(data)
        return len(data)


def wheel_metadata(url: str, ca: Path | None) -> str:
    """The text of the wheel's *.dist-info/METADATA."""
    try:
        reader = io.BufferedReader(_RangeReader(url, ca), buffer_size=256 * 1024)
        with zipfile.ZipFile(reader) as wheel:
            name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
            return wheel.read(name).decode("utf-8")
    except (OSError, zipfile.BadZipFile, StopIteration, KeyError, ValueError) as exc:
        raise EngineError(
            cause=f"cannot read the METADATA of {url} ({exc})",
            fix="run bump where the index answers range requests, or set the target's pins by hand",
        ) from exc
