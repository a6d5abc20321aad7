"""The base image pinned by digest (`digest:` of a base in matrix.yaml, its image ID: the sha256 of its config,
which names every layer): the build refuses any other base, and `build.py release pin-base` refreshes the pin."""

from __future__ import annotations

import re
from pathlib import Path

from pytorch_cuda.errors import EngineError, MatrixError
from pytorch_cuda.matrix.bases import Base

# The label a base bootstrapped offline carries (its inputs; `-date`: when): `build.py release pin-base` reads it.
BOOTSTRAP_LABEL = "dev.pytorch-cuda.base.bootstrap"


class BaseDigestError(EngineError):
    """The base image here is not the one matrix.yaml pins."""


def check_pin(base: Base, image_id: str, how: str) -> None:
    """Refuse a base whose digest differs from the pin, naming both; nothing to check without a pin."""
    if base.digest is None or image_id == base.digest:
        return
    raise BaseDigestError(
        cause=f"the base image {base.image} ({how}) is {image_id}, but matrix.yaml pins {base.digest}",
        fix="if this base is the one you mean to build on (a new bootstrap, a new upstream release), pin it with "
        "`python build.py release pin-base` and commit matrix.yaml; otherwise remove it (`docker rmi "
        f"{base.image}`) and load or pull the pinned image",
    )


def write_pin(matrix_path: Path, name: str, digest: str, note: str) -> str | None:
    """Set `digest:` (with a comment line `note`) in base `name` of matrix.yaml; return the old pin, if any."""
    text, old = pin_text(matrix_path.read_text(), name, digest, note)
    matrix_path.write_text(text)
    return old


def pin_text(
    text: str, name: str, digest: str, note: str, by: str = "build.py release pin-base"
) -> tuple[str, str | None]:
    """matrix.yaml's `text` with base `name` pinned to `digest` (comment: pinned by `by`: `note`), and the old pin."""
    block = re.search(rf"(?ms)^bases:\n(?:.*?\n)??(  {re.escape(name)}:\n(?:    .*\n|\s*\n)*)", text)
    if block is None:
        raise MatrixError(
            cause=f"matrix.yaml has no base {name!r} under `bases:`",
            fix="name one of its bases (--base), as `build.py list` shows them",
        )
    body = block.group(1)
    old = re.search(r"(?m)^    digest: (sha256:[0-9a-f]{64})", body)
    cleaned = re.sub(r"(?m)^    # pinned by build\.py .*\n", "", body)
    cleaned = re.sub(r"(?m)^    digest: .*\n", "", cleaned)
    pin = f"    # pinned by {by}: {note}\n    digest: {digest}\n"
    image_line = re.search(r"(?m)^    image: .*\n", cleaned)
    at = image_line.end() if image_line else len(cleaned)
    updated = cleaned[:at] + pin + cleaned[at:]
    return text[: block.start(1)] + updated + text[block.end(1) :], old.group(1) if old else None
