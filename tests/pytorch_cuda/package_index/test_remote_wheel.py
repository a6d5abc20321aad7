"""A wheel's METADATA read by HTTP range requests (PyPI serves no .metadata for torch): only the zip's tail
and the one member are fetched, and a server that ignores ranges is one clear error."""

from __future__ import annotations

import os
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pytorch_cuda.errors import EngineError
from pytorch_cuda.package_index.remote_wheel import wheel_metadata
from tests.support.loopback_index import PLATFORM_TAG, Release, build_wheel


class _Ranged(BaseHTTPRequestHandler):
    data = b""
    sent = 0
    ranges = True

    def log_message(self, format: str, *args: object) -> None:  # the base class's name
        return

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.data)))
        if self.ranges:
            self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_GET(self) -> None:
        start, end = (int(part) for part in self.headers["Range"].removeprefix("bytes=").split("-"))
        body = self.data[start : end + 1]
        type(self).sent += len(body)
        self.send_response(206)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, type[_Ranged]]]:
    wheel = build_wheel(tmp_path, Release("torch", "2.9.2", ("triton==3.5.2",), tag=PLATFORM_TAG))
    with zipfile.ZipFile(wheel, "a") as archive:  # 8 MB of incompressible library before the directory
        archive.writestr("torch/lib/libtorch_cuda.so", os.urandom(8 << 20), compress_type=zipfile.ZIP_STORED)
    handler = type("Handler", (_Ranged,), {"data": wheel.read_bytes(), "sent": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{wheel.name}", handler
    server.shutdown()
    server.server_close()


def test_only_the_tail_and_the_member_are_read(served: tuple[str, type[_Ranged]]) -> None:
    url, handler = served
    text = wheel_metadata(url, None)
    assert "Requires-Dist: triton==3.5.2" in text
    assert handler.sent < len(handler.data) / 10  # not the 8 MB library


def test_a_server_without_ranges_is_one_paragraph(served: tuple[str, type[_Ranged]]) -> None:
    url, handler = served
    handler.ranges = False
    with pytest.raises(EngineError, match="does not accept range requests"):
        wheel_metadata(url, None)
