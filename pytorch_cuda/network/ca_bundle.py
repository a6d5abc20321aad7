"""Find the host's CA bundle: a flag, else PIP_CERT, SSL_CERT_FILE or REQUESTS_CA_BUNDLE."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.errors import UserError

CA_ENVIRONMENT_VARIABLES = ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")


@dataclass(frozen=True)
class CaBundle:
    path: Path
    source: str  # "--ca-bundle" or the variable it came from


def find_ca_bundle(flag: Path | None, environ: dict[str, str] | None = None) -> CaBundle | None:
    """The bundle to pass to the build as the secret `pip_ca`, or None to use the image's own CAs."""
    env = dict(os.environ) if environ is None else environ
    if flag is not None:
        return _checked(flag, "--ca-bundle")
    for variable in CA_ENVIRONMENT_VARIABLES:
        value = env.get(variable)
        if value:
            return _checked(Path(value), variable)
    return None


def _checked(path: Path, source: str) -> CaBundle:
    if not path.is_file():
        raise UserError(
            cause=f"the CA bundle {path} (from {source}) does not exist or is not a file",
            fix=f"point {source} at a PEM bundle, or unset it to use the image's own CA certificates",
        )
    head = path.read_bytes()[: 1 << 16]
    if b"-----BEGIN CERTIFICATE-----" not in head:
        raise UserError(
            cause=f"the CA bundle {path} (from {source}) holds no PEM certificate",
            fix="pass a PEM file (-----BEGIN CERTIFICATE----- blocks), e.g. /etc/ssl/certs/ca-certificates.crt",
        )
    return CaBundle(path.resolve(), source)
