"""`--metadata-file`: what was built, in buildx's JSON (containerimage.digest, image.name, ...). Its shape follows
what was asked, never what came out: one --target gives buildx build's flat object, several (or a group) give
bake's, keyed by target, and a target that failed is left out of it rather than changing the shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.tags import candidate_by_digest


def metadata(found: dict[str, Any]) -> dict[str, Any]:
    """buildx's metadata of one built (or pushed) variant, from its JSON outcome."""
    entry: dict[str, Any] = {
        "containerimage.config.digest": found.get("image_id"),
        "image.name": ",".join(found.get("tags", [])),
        "pytorch-cuda.variant": found.get("variant"),
    }
    digests = found.get("digests") or {}
    if digests:
        entry["containerimage.digest"] = next(iter(digests.values()))
        entry["image.name"] = ",".join(digests)
    return entry


def write_metadata(path: Path, results: dict[str, dict[str, Any]], *, several: bool) -> None:
    """One target asked for: buildx build's flat JSON; several: bake's, keyed by target (those built)."""
    if several:
        body: dict[str, Any] = {target: metadata(found) for target, found in results.items()}
    elif results:
        body = metadata(next(iter(results.values())))
    else:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise UserError(
            cause=f"cannot write --metadata-file {path} ({error.strerror})", fix="pass a writable path"
        ) from None


def write_candidate_file(path: Path, found: dict[str, Any]) -> None:
    """`push --candidate --candidate-file PATH`: the variant's candidate as REPOSITORY@sha256:... in PATH."""
    variant = str(found.get("variant"))
    candidate = candidate_by_digest(found.get("digests") or {}, variant)
    if candidate is None:
        raise UserError(
            cause=f"the push of {variant} reported no digest for a candidate tag (candidate-{variant}-<id>)",
            fix="check that the registry took the push (its digests are in the --json output)",
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(candidate + "\n", encoding="utf-8")
    except OSError as error:
        raise UserError(
            cause=f"cannot write --candidate-file {path} ({error.strerror})", fix="pass a writable path"
        ) from None
