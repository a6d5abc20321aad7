"""Where the release tags point, and which of a build's own candidate tags are left, on the real engine.

Other builds share the engine (the other integration lane, another checkout's build.py): their candidate tags come
and go while a test runs, so a test asks about the candidate tags its own build.py run named, never about every
`pytorch-cuda:candidate-*` tag there is."""

from __future__ import annotations

import re
from collections.abc import Sequence

import docker

# build.py's progress line as each image of a build starts (image_build/pipeline.py, printed after "> "):
# "building pytorch-cuda:candidate-cu128-runtime-1a2b3c4d from .../Dockerfile (log: ...)". A colour code may stand
# before "building" where the console colours, so the line is not anchored.
_BUILDING = re.compile(r"building ([\w.:/-]+:candidate-[\w.-]+) from ")


def tag_ids(client: docker.DockerClient, refs: list[str]) -> dict[str, str | None]:
    """Each reference's image ID, or None where the tag does not exist."""
    found: dict[str, str | None] = {}
    for ref in refs:
        try:
            found[ref] = client.images.get(ref).id
        except docker.errors.ImageNotFound:
            found[ref] = None
    return found


def built_candidates(progress: str) -> list[str]:
    """The candidate tags a build.py run's progress (its stderr) says it built into, parents first.

    Fails where it names none: a check that this build left no candidate tag would then check nothing."""
    found = _BUILDING.findall(progress)
    assert found, f"the progress names no candidate tag (`> building <candidate> from ...`):\n{progress[-2000:]}"
    return found


def left_behind(client: docker.DockerClient, candidates: Sequence[str]) -> list[str]:
    """Those of `candidates` (a build's own candidate tags) that are still tagged on the engine: a finished or
    failed build leaves none."""
    return [ref for ref, image_id in tag_ids(client, list(candidates)).items() if image_id is not None]
