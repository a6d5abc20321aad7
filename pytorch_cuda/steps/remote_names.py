"""Where `push --registry HOST[/NAMESPACE]` puts images: the remote names of a variant's tags and its build cache."""

from __future__ import annotations

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.tags import TagSet
from pytorch_cuda.references import InvalidReferenceError, parse_reference, registry_host

CACHE_TAG_PREFIX = "buildcache-"


def parse_registry(value: str) -> str:
    """``HOST[:PORT][/NAMESPACE...]`` without a trailing slash, or a UserError that shows the form."""
    registry = value.strip().rstrip("/")
    try:
        reference = parse_reference(f"{registry}/pytorch-cuda:probe")
    except InvalidReferenceError as exc:
        raise UserError(
            cause=f"--registry {value!r} is not HOST[:PORT][/NAMESPACE] ({exc})",
            fix="pass the registry host and, if any, a namespace in lower case, e.g. `--registry 127.0.0.1:5000/ci` "
            "or `--registry ghcr.io/my-org`",
        ) from exc
    if registry_host(reference.repository) is None:
        raise UserError(
            cause=f"--registry {value!r} names no registry host (a host has a '.' or a ':PORT', or is 'localhost')",
            fix="put the host first, e.g. `--registry docker.io/my-user`, `--registry 127.0.0.1:5000/ci`",
        )
    return registry


def remote_tags(tags: TagSet, registry: str) -> TagSet:
    """The same tags under the registry: ``127.0.0.1:5000/ci/pytorch-cuda:v2.9`` for ``pytorch-cuda:v2.9``."""
    return TagSet(repository=f"{registry}/{tags.repository}", full=tags.full, aliases=tags.aliases)


def cache_ref(tags: TagSet, registry: str, variant_key: str) -> str:
    """Where the variant's BuildKit cache lives in the registry (clients that can export it only)."""
    return f"{registry}/{tags.repository}:{CACHE_TAG_PREFIX}{variant_key}"
