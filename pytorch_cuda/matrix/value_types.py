"""The matrix's value types: PEP 440 versions, CUDA and driver versions, names, Debian packages and
image references, each an annotated str whose validator says what was expected."""

from __future__ import annotations

import re
from typing import Annotated

from packaging.version import InvalidVersion, Version
from pydantic import AfterValidator, BaseModel, ConfigDict

from pytorch_cuda.references import InvalidReferenceError, parse_reference


def _check_version(value: str) -> str:
    try:
        Version(value)
    except InvalidVersion as exc:
        raise ValueError(f"{value!r} is not a PEP 440 version (e.g. '2.9.1')") from exc
    return value


def _matching(pattern: str, what: str) -> AfterValidator:
    """A validator that accepts strings matching ``pattern`` and otherwise says what was expected."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(f"{value!r} is not {what}")
        return value

    return AfterValidator(check)


PepVersion = Annotated[str, AfterValidator(_check_version)]
CudaVersion = Annotated[str, _matching(r"\d+\.\d+", "a CUDA major.minor version (e.g. '12.8')")]
DriverVersion = Annotated[str, _matching(r"\d+\.\d+(\.\d+)?", "an NVIDIA driver version (e.g. '570.26')")]
Name = Annotated[str, _matching(r"[a-z0-9][a-z0-9._-]*", "a name of lower-case letters, digits, '.', '_' or '-'")]
DebPackage = Annotated[str, _matching(r"[a-z0-9][a-z0-9+.-]+", "a Debian package name")]


def _check_reference(value: str) -> str:
    try:
        parse_reference(value)
    except InvalidReferenceError as exc:
        raise ValueError(
            f"not a Docker image reference ('repo/name:tag' or 'repo/name[:tag]@sha256:...'): {exc}"
        ) from exc
    return value


ImageRef = Annotated[str, AfterValidator(_check_reference)]
Sha256Digest = Annotated[str, _matching(r"sha256:[0-9a-f]{64}", "a digest 'sha256:<64 lower-case hex digits>'")]


class Frozen(BaseModel):
    """The matrix's models: frozen, and an unknown key is an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)
