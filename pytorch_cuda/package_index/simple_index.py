"""One project's files on a package index: PEP 691 JSON where the index speaks it, else PEP 503 HTML.

Each file keeps what bump and the locks' age gate decide by: its name (wheel tags, version), whether it is yanked
(PEP 592), its Requires-Python, and whether the index serves its core metadata beside it (PEP 658/714).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

from packaging.utils import canonicalize_name

from pytorch_cuda.errors import EngineError
from pytorch_cuda.tls import tls_context

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_TYPE}, text/html;q=0.1"


@dataclass(frozen=True)
class IndexFile:
    filename: str
    url: str
    yanked: bool
    requires_python: str | None
    has_metadata: bool  # the index serves URL.metadata (PEP 658)
    upload_time: str | None = None  # ISO 8601, from PEP 691 JSON's upload-time (PEP 700); HTML pages have none


FileSource = Callable[[str, str], list[IndexFile]]  # (index URL, project) -> its files


class _Anchors(HTMLParser):
    """The <a> elements of a PEP 503 page, with their data-* attributes."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base
        self.files: list[IndexFile] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        href = found.get("href")
        if tag != "a" or not href:
            return
        url = urljoin(self.base, href)
        metadata = found.get("data-core-metadata") or found.get("data-dist-info-metadata")
        self.files.append(
            IndexFile(
                filename=url.split("#")[0].rsplit("/", 1)[-1],
                url=url.split("#")[0],
                yanked="data-yanked" in found,
                requires_python=found.get("data-requires-python"),
                has_metadata=metadata not in (None, "false"),
            )
        )


def _from_json(base: str, body: str) -> list[IndexFile]:
    files: list[IndexFile] = []
    for entry in json.loads(body).get("files", []):
        metadata = entry.get("core-metadata", entry.get("dist-info-metadata", False))
        files.append(
            IndexFile(
                filename=entry["filename"],
                url=urljoin(base, entry["url"]).split("#")[0],
                yanked=bool(entry.get("yanked", False)),
                requires_python=entry.get("requires-python"),
                has_metadata=metadata is not None and metadata is not False,  # {} (no hashes) counts
                upload_time=entry.get("upload-time"),
            )
        )
    return files


def fetch_url(url: str, ca_bundle: Path | None, accept: str = "*/*", timeout_s: float = 60.0) -> tuple[str, str]:
    """GET url: (content type, body); an unreachable index is one EngineError paragraph."""
    content_type, body = fetch_bytes(url, ca_bundle, accept, timeout_s)
    return content_type, body.decode("utf-8")


def fetch_bytes(url: str, ca_bundle: Path | None, accept: str = "*/*", timeout_s: float = 60.0) -> tuple[str, bytes]:
    """GET url: (content type, body bytes); an unreachable server is one EngineError paragraph."""
    context = tls_context(ca_bundle) if url.startswith("https:") else None  # plain http: no TLS to set up
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "pytorch-cuda-build"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s, context=context) as response:
            return response.headers.get("Content-Type", ""), bytes(response.read())
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise EngineError(
            cause=f"cannot read {url} ({getattr(exc, 'reason', exc)})",
            fix="run where the package index (or the archive, or the advisory database) is reachable, pass "
            "--ca-bundle PATH if your network needs one, or choose the target with --target",
        ) from exc


def project_files(index_url: str, name: str, ca_bundle: Path | None) -> list[IndexFile]:
    """Every file of project `name` on the index (an empty list when the index does not have it)."""
    url = f"{index_url.rstrip('/')}/{canonicalize_name(name)}/"
    try:
        content_type, body = fetch_url(url, ca_bundle, ACCEPT)
    except EngineError as exc:
        if isinstance(exc.__cause__, urllib.error.HTTPError) and exc.__cause__.code == 404:
            return []
        raise
    if content_type.startswith(JSON_TYPE):
        return _from_json(url, body)
    anchors = _Anchors(url)
    anchors.feed(body)
    return anchors.files
