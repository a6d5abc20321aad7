"""The pinned base is the real base (`sign --require-pinned-base`, which release.yml passes before any tag moves):

1. matrix.yaml's default base carries `digest:` (its image ID: the sha256 of its config, which names every layer);
2. the base is published: `upstream:` names it by digest in a registry (REPO@sha256:MANIFEST); a local bootstrap
   that was never pushed is refused, since nobody else can check an image against it;
3. the published base's config is the pinned one;
4. the image's layers start with the base's, compared **by content**: the layer blobs its manifest lists (their
   digests, which the registry and `docker pull` check against the bytes) start with the pinned base manifest's;
   the config's rootfs.diff_ids are the image's own claim, so they must agree too but prove nothing alone (an
   image whose config claims the base's layers over other blobs signed and verified, and `docker pull` refused it).
"""

from __future__ import annotations

import json
from pathlib import Path

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.oci.image_config import config_digest, image_config
from pytorch_cuda.oci.registry_client import RegistryClient, open_image, reference
from pytorch_cuda.references import parse_reference
from pytorch_cuda.release.build_inputs import PinnedBase


class NotBuiltOnBaseError(UserError):
    """The image's layers do not start with the pinned base's. Exit status 1."""

    exit_status = EXIT_CHECKS_FAILED


def pinned_digest(matrix_path: Path) -> tuple[str, str, str | None]:
    """(the base's name, its pinned digest, its upstream); refused (exit 2) when the base has no `digest:`."""
    matrix = load_matrix(matrix_path)
    name = matrix.default_base
    base = matrix.bases[name]
    if base.digest is None:
        raise UserError(
            cause=f"matrix.yaml's base {name!r} ({base.image}) carries no digest:, so the image's "
            "first input is not pinned and the release would attest an unpinned base",
            fix="pin it (`build.py release pin-base` where the base was pulled from its upstream registry), commit "
            "matrix.yaml, and release again; docs/release.md, 'What is pinned'",
        )
    return name, base.digest, base.upstream


def _config(client: RegistryClient, repository: str, raw: bytes) -> tuple[str, list[str]]:
    digest = config_digest(raw)
    if digest is None:
        raise UserError(
            cause=f"{repository} is an image index (several platforms), not one image manifest",
            fix="check one platform's manifest: pin the base and sign the image by their linux/amd64 digests",
        )
    config = image_config(client, repository, digest)
    return digest, [str(layer) for layer in (config.get("rootfs") or {}).get("diff_ids") or []]


def _layer_blobs(raw: bytes) -> list[str]:
    """The digests of the layer blobs a manifest lists, in order (what `docker pull` fetches and checks)."""
    return [str(layer.get("digest")) for layer in json.loads(raw).get("layers") or []]


def check_built_on_base(matrix_path: Path, image: str) -> PinnedBase:
    name, pinned, upstream = pinned_digest(matrix_path)
    published = parse_reference(upstream) if upstream else None
    if published is None or published.digest is None:
        raise UserError(
            cause=f"matrix.yaml's base {name!r} is pinned to {pinned}, but no published image is named by digest "
            f"(upstream: {upstream or 'none'}): a local bootstrap that was never pushed, so nobody can check that "
            "the release was built on it",
            fix="push the base to a registry (or use the upstream image), set `upstream: REGISTRY/REPO@sha256:...`, "
            "run `build.py release pin-base` and commit matrix.yaml",
        )
    base_client, base_manifest = open_image(str(published))
    base_config, base_layers = _config(base_client, published.repository, base_manifest.raw)
    if base_config != pinned:
        raise NotBuiltOnBaseError(
            cause=f"the published base {published.pinned} has config {base_config}, not the pinned {pinned}",
            fix="pin the base that was published (`build.py release pin-base`), or publish the pinned one",
        )
    client, manifest = open_image(image)
    blobs, base_blobs = _layer_blobs(manifest.raw), _layer_blobs(base_manifest.raw)
    if not base_blobs or blobs[: len(base_blobs)] != base_blobs:
        raise NotBuiltOnBaseError(
            cause=f"{image} was not built on the pinned base {published.pinned}: the first layer blobs of its "
            f"manifest ({', '.join(d[7:19] for d in blobs[: len(base_blobs)]) or 'none'}) are not the base "
            f"manifest's ({', '.join(d[7:19] for d in base_blobs)}), whatever its config claims (rootfs.diff_ids)",
            fix="build the image FROM the pinned base pulled by its digest (build.py does), push it so that the "
            "base's layers are kept as they are (not recompressed), then sign it",
        )
    _, layers = _config(client, reference(image).repository, manifest.raw)
    if not base_layers or layers[: len(base_layers)] != base_layers:
        raise NotBuiltOnBaseError(
            cause=f"{image} was not built on the pinned base {published.pinned}: its config's first layers "
            "(rootfs.diff_ids, which must name the blobs its manifest lists) "
            f"({', '.join(d[7:19] for d in layers[: len(base_layers)]) or 'none'}) are not the base's "
            f"({', '.join(d[7:19] for d in base_layers)})",
            fix="build the image FROM the pinned base (build.py does), then sign it",
        )
    return PinnedBase(name, str(published.pinned), pinned)
