"""One TLS context per CA bundle for the whole process, and the pooled session on it (the audit's PyPI reads)."""

from __future__ import annotations

import ssl
from pathlib import Path

import certifi

from pytorch_cuda.tls import https_session, tls_context


def test_one_context_per_bundle_made_once_and_verifying() -> None:
    """Before: every HTTPS read made its own context, loading the whole bundle again (120-140 ms under load)."""
    bundle = Path(certifi.where())
    context = tls_context(bundle)
    assert tls_context(bundle) is context
    assert tls_context(None) is tls_context(None) is not context
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)
    assert context.get_ca_certs()  # the bundle's certificates are loaded


def test_the_session_keeps_connections_on_that_context() -> None:
    session = https_session(Path(certifi.where()), 16)
    adapter = session.get_adapter("https://pypi.org/pypi/x/json")
    pool = adapter.poolmanager  # type: ignore[attr-defined]
    assert pool.connection_pool_kw["ssl_context"] is tls_context(Path(certifi.where()))
    assert (adapter._pool_maxsize, adapter.max_retries.total) == (16, 3)  # type: ignore[attr-defined]
