"""`build.py release pin-base`: pin matrix.yaml's base to the digest (image ID) of the base image here, with a
comment saying where it came from (a bootstrap's mmdebstrap inputs and date, or the registry digest it was
pulled by)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from pytorch_cuda.errors import EngineError, MatrixError
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.matrix.pinned_base import BOOTSTRAP_LABEL, write_pin


@dataclass(frozen=True)
class Pinned:
    base: str
    image: str
    digest: str
    previous: str | None
    note: str


def pin_base(matrix_path: Path, name: str | None = None) -> Pinned:
    matrix = load_matrix(matrix_path)
    key = name or matrix.default_base
    if key not in matrix.bases:
        raise MatrixError(cause=f"matrix.yaml has no base {key!r}", fix=f"name one of {', '.join(matrix.bases)}")
    base = matrix.bases[key]
    try:
        image = docker.from_env().images.get(base.image)
    except docker.errors.ImageNotFound as exc:
        raise EngineError(
            cause=f"the base image {base.image} is not here, so there is nothing to pin",
            fix="build once (it pulls the upstream or bootstraps the base), or load the base you mean, then pin",
        ) from exc
    except docker.errors.DockerException as exc:
        raise EngineError(cause=f"the Docker engine did not answer ({exc})", fix="start it (scripts/setup.sh)") from exc
    labels = image.labels or {}
    if BOOTSTRAP_LABEL in labels:
        note = f"bootstrapped {labels.get(BOOTSTRAP_LABEL + '-date', '?')} by: {labels[BOOTSTRAP_LABEL]}"
    else:
        note = "pulled as " + (", ".join(image.attrs.get("RepoDigests") or []) or base.image)
    previous = write_pin(matrix_path, key, str(image.id), note)
    return Pinned(key, base.image, str(image.id), previous, note)
