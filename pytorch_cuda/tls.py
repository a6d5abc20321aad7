"""One TLS client context per CA bundle, made once per process and shared by every HTTPS read, and a requests
session on it that keeps its connections open for many reads of one host (the audit's PyPI JSON reads).

`ssl.create_default_context` loads the whole CA bundle each time (about 30 ms on an idle core here, 120-140 ms under
load), and it holds the GIL while it does: made per request, the audit's 200 PyPI reads spent more time there than
on the network. An `SSLContext` is safe to share between threads (each connection is its own SSLSocket)."""

from __future__ import annotations

import ssl
from functools import lru_cache
from pathlib import Path
from typing import Any

import requests
from requests.adapters import HTTPAdapter


def tls_context(ca_bundle: Path | None) -> ssl.SSLContext:
    """The default client context, verifying against `ca_bundle` (None: the system's), made once per bundle."""
    return _context(str(ca_bundle) if ca_bundle else None)


@lru_cache(maxsize=8)
def _context(cafile: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=cafile)


class _ContextAdapter(HTTPAdapter):
    """requests' adapter on one shared TLS context: each new connection verifies with it, and requests' own
    per-connection CA loading (certifi, or `verify=PATH` loaded again) is left out."""

    def __init__(self, context: ssl.SSLContext, connections: int) -> None:
        self._tls = context
        super().__init__(pool_connections=4, pool_maxsize=connections, max_retries=3)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        super().init_poolmanager(connections, maxsize, block, ssl_context=self._tls, **pool_kwargs)

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        return  # the context verifies: CERT_REQUIRED and the host name, against its CA bundle


def https_session(ca_bundle: Path | None, connections: int) -> requests.Session:
    """A requests session that keeps up to `connections` connections per host open for reuse (one DNS lookup and
    one TLS handshake each, not one per request), verifying with `tls_context(ca_bundle)`, and retrying a
    connection that fails to open (a name that did not resolve) three times."""
    session = requests.Session()
    session.mount("https://", _ContextAdapter(tls_context(ca_bundle), connections))
    session.headers["User-Agent"] = "pytorch-cuda-build"
    return session
