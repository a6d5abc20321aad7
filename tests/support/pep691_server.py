"""`python pep691_server.py PORT`: http.server for a loopback package index (run in its folder, on 127.0.0.1)
that answers a client asking for PEP 691 JSON (`Accept: application/vnd.pypi.simple.v1+json`, as uv and
build.py bump do) with the project's index.json, which carries PEP 700 upload times; anyone else gets the
PEP 503 HTML page. Started by tests/support/loopback_index.py."""

from __future__ import annotations

import http.server
import sys
from pathlib import Path

JSON = "application/vnd.pypi.simple.v1+json"


class Handler(http.server.SimpleHTTPRequestHandler):
    def send_head(self):  # type: ignore[no-untyped-def]  # http.server's own untyped hook
        folder = Path(self.translate_path(self.path))
        page = folder / "index.json"
        if folder.is_dir() and page.is_file() and JSON in self.headers.get("Accept", ""):
            body = page.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", JSON)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return _Body(body)
        return super().send_head()

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Body:
    """What send_head returns: a file-like object that copyfile reads and then closes."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, size: int = -1) -> bytes:
        data, self.data = (self.data, b"") if size < 0 else (self.data[:size], self.data[size:])
        return data

    def close(self) -> None:
        self.data = b""


if __name__ == "__main__":
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.serve_forever()
