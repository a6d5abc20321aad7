"""Where the release tags point, and which candidate tags are left, on the real engine."""

from __future__ import annotations

import docker


def tag_ids(client: docker.DockerClient, refs: list[str]) -> dict[str, str | None]:
    """Each reference's image ID, or None where the tag does not exist."""
    found: dict[str, str | None] = {}
    for ref in refs:
        try:
            found[ref] = client.images.get(ref).id
        except docker.errors.ImageNotFound:
            found[ref] = None
    return found


def candidate_tags(client: docker.DockerClient) -> list[str]:
    """The `pytorch-cuda:candidate-*` tags a build left behind (a finished or failed build leaves none)."""
    return [t for image in client.images.list("pytorch-cuda") for t in image.tags if ":candidate-" in t]
