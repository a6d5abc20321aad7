"""Check, before a long build, that the target's package index answers from here."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from pytorch_cuda.errors import EngineError
from pytorch_cuda.tls import tls_context


def probe_index(index_url: str, ca_bundle: Path | None, timeout_s: float = 20.0) -> None:
    """Raise EngineError("index unreachable") unless the index's torch page answers."""
    url = index_url.rstrip("/") + "/torch/"
    context = tls_context(ca_bundle)
    request = urllib.request.Request(url, method="GET", headers={"User-Agent": "pytorch-cuda-build"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s, context=context) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        certificate = isinstance(reason, ssl.SSLCertVerificationError)
        raise EngineError(
            cause=f"the package index {index_url} is unreachable from this machine ({reason})",
            fix=(
                "pass the CA bundle your network needs with --ca-bundle PATH"
                if certificate
                else "build where that index can be reached, mirror it and point the target's 'index' in matrix.yaml "
                "at the mirror, or choose a target whose index is reachable (cu128 uses PyPI)"
            ),
        ) from exc
    if status >= 400:
        raise EngineError(
            cause=f"the package index {index_url} is unreachable: {url} answered HTTP {status}",
            fix="check the target's 'index' in matrix.yaml, or build a target whose index answers (cu128 uses PyPI)",
        )


def index_probe(ca_bundle: Path | None) -> Callable[[str], None]:
    """probe_index trusting ``ca_bundle``: the probe a lock's Resolver takes."""
    return lambda index_url: probe_index(index_url, ca_bundle)
