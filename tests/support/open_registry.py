"""A small open registry on a loopback port (plain HTTP, as loopback registries speak): it serves what a test
puts in `OpenRegistry.objects`, and can declare a size it never sends, send none, or send a gzip bomb."""

from __future__ import annotations

import contextlib
import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final

from pytorch_cuda.oci.registry_client import MOST_MANIFEST_BYTES

INDEX: Final = "application/vnd.oci.image.index.v1+json"
IMAGE: Final = "application/vnd.oci.image.manifest.v1+json"
# An index larger than the manifest cap: its padding alone is the cap.
HUGE: Final = json.dumps(
    {"schemaVersion": 2, "mediaType": INDEX, "manifests": [], "pad": "x" * MOST_MANIFEST_BYTES}
).encode()


class OpenRegistry(BaseHTTPRequestHandler):
    """Serves `objects` (path -> media type, bytes) on GET and HEAD; 404 for anything else."""

    objects: dict[str, tuple[str, bytes]] = {}  # noqa: RUF012 (each test sets what the registry holds)
    # path -> how its size is declared: "none" (no Content-Length: read until the connection closes), "gzip" (the
    # compressed size, the body decompressing to far more), or a number of bytes declared with no body sent
    declared: dict[str, str] = {}  # noqa: RUF012

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        media_type, body = self.objects.get(self.path, ("application/json", b'{"errors":[]}'))
        self.send_response(200 if self.path in self.objects or self.path == "/v2/" else 404)
        self.send_header("Content-Type", media_type)
        how = self.declared.get(self.path)
        if how == "gzip":
            body = gzip.compress(body)
            self.send_header("Content-Encoding", "gzip")
        if how is None or how == "gzip":
            self.send_header("Content-Length", str(len(body)))
        elif how.isdigit():
            self.send_header("Content-Length", how)
            body = b""  # declared and never sent: a client that reads would fail otherwise
        self.end_headers()
        with contextlib.suppress(OSError):  # the client stopped reading
            self.wfile.write(body)


@contextlib.contextmanager
def serving() -> Iterator[str]:
    """The registry on a free loopback port while the block runs: its `HOST:PORT`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), OpenRegistry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
