"""An OSV-compatible advisory service on 127.0.0.1 (`POST /v1/query`, the API pip-audit's --osv-url speaks),
answering from OSV records kept in a folder (tests/fixtures/osv/: copies of published advisories): a record
answers for a package version that one of its ECOSYSTEM ranges covers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import Version


def covers(record: dict[str, Any], name: str, version: str) -> bool:
    for affected in record["affected"]:
        if canonicalize_name(affected["package"]["name"]) != canonicalize_name(name):
            continue
        for span in (r for r in affected.get("ranges", []) if r["type"] == "ECOSYSTEM"):
            introduced = next((e["introduced"] for e in span["events"] if "introduced" in e), "0")
            fixed = next((e["fixed"] for e in span["events"] if "fixed" in e), None)
            low = introduced == "0" or Version(version) >= Version(introduced)
            if low and (fixed is None or Version(version) < Version(fixed)):
                return True
    return False


@contextmanager
def osv_service(records: Path) -> Iterator[str]:
    """The service's /v1/query URL while the block runs; `queries` of each request are kept on the server."""
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(records.glob("*.json"))]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            query = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            name, version = query["package"]["name"], query["version"]
            body = json.dumps(
                {"vulns": [r for r in loaded if covers(r, name, version)]}
                if any(covers(r, name, version) for r in loaded)
                else {}
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/query"
    finally:
        server.shutdown()
        server.server_close()
