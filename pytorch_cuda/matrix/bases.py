"""matrix.yaml's ``bases``: the base image every variant builds FROM, and how it is bootstrapped."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, HttpUrl, model_validator

from pytorch_cuda.matrix.value_types import CudaVersion, Frozen, ImageRef, Name, Sha256Digest
from pytorch_cuda.references import parse_reference


class Bootstrap(Frozen):
    tool: Literal["mmdebstrap"]
    suite: Name
    variant: Literal["minbase", "essential", "apt", "required", "buildd", "important", "standard"]
    mirror: HttpUrl
    components: tuple[Name, ...] = ("main",)


class Base(Frozen):
    # The local name build.py tags the base as (and builds FROM): a tag, never a digest.
    image: ImageRef
    # Pulled when the base is not here, then tagged as ``image``; may be pinned by digest
    # (``docker.io/library/debian:trixie-slim@sha256:...``), and then only that image is used.
    upstream: ImageRef | None = None
    # The base's image ID (sha256 of its config, which names every layer): any other base is refused.
    # `build.py release pin-base` writes it (docs/release.md).
    digest: Sha256Digest | None = None
    python: CudaVersion = Field(description="major.minor of the base's python3")
    bootstrap: Bootstrap

    @model_validator(mode="after")
    def _local_name_is_not_docker_hub(self) -> Base:
        local = parse_reference(self.image)
        if local.digest is not None:
            raise ValueError(
                f"image {self.image!r} carries a digest, but it is the local name build.py tags the base as; "
                "pin the digest on 'upstream' instead (e.g. 'docker.io/library/debian:trixie-slim@sha256:...')"
            )
        if self.image.startswith(("docker.io/", "library/")) or "/" not in local.repository:
            raise ValueError(
                f"image {self.image!r} looks like a Docker Hub name; use a local namespace such as "
                "'pytorch-cuda-base/debian:trixie' so a bootstrapped base never pretends to be Docker Hub's"
            )
        return self
