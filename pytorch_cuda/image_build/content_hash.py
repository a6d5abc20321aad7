"""`build.py content-hash IMAGE`: what a GPU conformance result depends on, as one sha256.

The image's layer diff_ids (its filesystem, in order), the parts of its config that change how a
container runs (Env, Entrypoint, Cmd, User, WorkingDir), and the suite's files (conformance/).
Labels are left out on purpose: they carry the commit and its time, which change on every commit
while the bytes that run do not. The nightly workflow keys a cache on this hash and the runner, so
a GPU job skips an image it already passed with the same suite on the same kind of runner.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda_contract.suite_digest import suite_tree_digest

RUN_CONFIG_KEYS = ("Env", "Entrypoint", "Cmd", "User", "WorkingDir")
_SCHEMA = "pytorch-cuda/content-hash/1"


@dataclass(frozen=True)
class ImageContent:
    """What of an image decides how the suite runs in it."""

    diff_ids: tuple[str, ...]
    run_config: Mapping[str, Any]


def content_hash(image: ImageContent, suite: str) -> str:
    """sha256 (hex) over the layers in order, the run config and the suite's digest."""
    if not image.diff_ids:
        raise UserError(
            cause="the image lists no layers (RootFS.Layers is empty)",
            fix="pass an image that was pulled or built on this engine",
        )
    document = {
        "schema": _SCHEMA,
        "layers": list(image.diff_ids),
        "config": {key: image.run_config.get(key) for key in RUN_CONFIG_KEYS},
        "suite": suite,
    }
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def image_content(inspect: Mapping[str, Any]) -> ImageContent:
    """The content of `docker image inspect`'s JSON for one image."""
    layers = inspect.get("RootFS", {}).get("Layers") or []
    config = inspect.get("Config") or {}
    return ImageContent(tuple(str(layer) for layer in layers), {k: config.get(k) for k in RUN_CONFIG_KEYS})


def inspect_image(ref: str) -> Mapping[str, Any]:
    """`docker image inspect REF` through the Docker SDK."""
    import docker
    import docker.errors

    from pytorch_cuda.engine.connection import connect

    client = connect()
    try:
        attrs: Mapping[str, Any] = client.images.get(ref).attrs
    except docker.errors.ImageNotFound:
        raise UserError(
            cause=f"the image {ref} is not on this Docker engine",
            fix=f"pull it first (`docker pull {ref}`), then hash it",
        ) from None
    except docker.errors.APIError as exc:
        raise EngineError(cause=f"the engine could not inspect {ref}: {exc}", fix="check the reference") from exc
    return attrs


Inspector = Callable[[str], Mapping[str, Any]]


def hash_image(ref: str, suite_dir: Path, inspect: Inspector = inspect_image) -> dict[str, object]:
    """The content hash of an image on this engine and the suite in suite_dir, with what went into it."""
    image = image_content(inspect(ref))
    suite = suite_tree_digest(suite_dir)
    return {"image": ref, "layers": len(image.diff_ids), "suite": suite, "content_hash": content_hash(image, suite)}
