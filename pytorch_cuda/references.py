"""Docker image references: ``[HOST[:PORT]/]PATH[:TAG][@sha256:DIGEST]``, parsed the way the engine does.

A reference has a repository, at most one tag and at most one digest. The tag is what follows the
last ``:`` *after the last ``/``* (a ``:`` before it is a registry port), and the digest what follows
``@``; splitting a whole reference at its last ``:`` breaks both ``127.0.0.1:5000/ci/x`` and
``debian:trixie-slim@sha256:...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9a-fA-F:]+\])"
_REPOSITORY = re.compile(rf"(?:{_HOST}(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*")


class InvalidReferenceError(ValueError):
    """Not a Docker image reference; the message says which part is wrong."""


@dataclass(frozen=True)
class ImageReference:
    repository: str  # [HOST[:PORT]/]PATH, as written (no normalisation to docker.io/library/)
    tag: str | None = None
    digest: str | None = None  # "sha256:<64 hex>"

    def __str__(self) -> str:
        return self.repository + (f":{self.tag}" if self.tag else "") + (f"@{self.digest}" if self.digest else "")

    @property
    def pinned(self) -> str | None:
        """``repository@digest`` (the tag dropped: the digest alone decides), or None without a digest."""
        return f"{self.repository}@{self.digest}" if self.digest else None

    @property
    def lookup(self) -> str:
        """The form to look the image up by in the engine: by digest when pinned, else repository:tag."""
        return self.pinned or f"{self.repository}:{self.tag or 'latest'}"

    @property
    def pull_args(self) -> tuple[str, str]:
        """(repository, tag) for the Engine API's image create: the digest goes where the tag goes."""
        return self.repository, self.digest or self.tag or "latest"


def parse_reference(text: str) -> ImageReference:
    """Split a reference into repository, tag and digest, or raise InvalidReferenceError naming the bad part."""
    name, at, digest = text.partition("@")
    if at and not _DIGEST.fullmatch(digest):
        raise InvalidReferenceError(f"{text!r}: the digest {digest!r} is not sha256:<64 lower-case hex digits>")
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    repository, tag = (name[:colon], name[colon + 1 :]) if colon > last_slash else (name, None)
    if tag is not None and not _TAG.fullmatch(tag):
        raise InvalidReferenceError(
            f"{text!r}: the tag {tag!r} is not a valid tag ([A-Za-z0-9_][A-Za-z0-9_.-], 128 at most)"
        )
    if not _REPOSITORY.fullmatch(repository):
        raise InvalidReferenceError(
            f"{text!r}: the repository {repository!r} is not [HOST[:PORT]/]path of lower-case letters, digits and "
            "separators"
        )
    return ImageReference(repository, tag, digest if at else None)


def registry_host(repository: str) -> str | None:
    """The registry part of a repository (``127.0.0.1:5000``), or None for Docker Hub's short names."""
    first, slash, _ = repository.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost" or first.startswith("[")):
        return first
    return None
