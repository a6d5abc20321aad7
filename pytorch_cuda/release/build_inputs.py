"""What a variant is built from, as a checkout commits it: the pinned base (matrix.yaml's `digest:` and the
published `upstream:` it names by digest) and the sha256 of every lock file that the variant's Dockerfiles read
(its own and its parents': images/installer.lock, the layer slices, requirements.lock, sbom-tool.lock, ...).

`sign` records them in the SLSA provenance's resolvedDependencies (statements.py); `verify` reads them from the
checkout it runs from and compares (provenance_inputs.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.matrix.flavours import lineage
from pytorch_cuda.matrix.image_folders import DOCKERFILE, variant_dir
from pytorch_cuda.matrix.variants import Variant, all_variants
from pytorch_cuda.references import parse_reference
from pytorch_cuda.release.cosign_layout import sha256

# A lock file the Dockerfile bind-mounts or copies: `source=images/....lock`, `COPY images/....lock ...`.
LOCK_REFERENCE = re.compile(r"(?<![\w/.-])images/[A-Za-z0-9._/-]+\.lock\b")


class BuildInputsError(UserError):
    """The checkout cannot say what the variant is built from (unknown variant, a lock not committed). Exit 2."""


class UnknownVariantError(BuildInputsError):
    """matrix.yaml declares no such variant."""


@dataclass(frozen=True)
class PinnedBase:
    name: str  # matrix.yaml's base, e.g. trixie
    published: str  # REPO@sha256:MANIFEST (matrix.yaml's upstream)
    config: str  # the pinned image ID, sha256:HEX (matrix.yaml's digest)

    @property
    def uri(self) -> str:
        """The base as a resolvedDependency's uri (its digest is the config's)."""
        return f"docker://{self.published}"


@dataclass(frozen=True)
class BuildInputs:
    variant: str  # e.g. cu128-runtime
    base: PinnedBase | None  # None: the checkout pins no published base
    base_name: str
    locks: Mapping[str, str | None]  # path relative to the checkout -> sha256:HEX (None: not committed here)


def _variant(root: Path, key: str) -> tuple[list[Variant], Variant]:
    matrix = load_matrix(root / "matrix.yaml")
    found = {variant.key: variant for variant in all_variants(matrix)}
    if key not in found:
        raise UnknownVariantError(
            cause=f"{key!r} is not a variant of {root / 'matrix.yaml'} ({', '.join(sorted(found))})",
            fix="name the variant the image is (--variant, e.g. cu128-runtime)",
        )
    return lineage(matrix, found[key]), found[key]


def lock_paths(root: Path, chain: list[Variant]) -> list[str]:
    """Every lock file the Dockerfiles of `chain` (root first) read, relative to the checkout, in order."""
    paths: list[str] = []
    for variant in chain:
        dockerfile = variant_dir(root, variant) / DOCKERFILE
        try:
            text = dockerfile.read_text(encoding="utf-8")
        except OSError as exc:
            raise BuildInputsError(
                cause=f"cannot read {dockerfile} ({exc}), so what {variant.key} is built from is unknown",
                fix="render it (`build.py render`) and commit images/",
            ) from exc
        paths += [path for path in LOCK_REFERENCE.findall(text) if path not in paths]
    return paths


def committed_inputs(root: Path, key: str, *, strict: bool = False) -> BuildInputs:
    """The base pin and the lock hashes of variant `key`, read from the checkout at `root`; `strict` (sign)
    refuses a lock the Dockerfiles read that is not committed (the variant cannot have been built here)."""
    chain, variant = _variant(root, key)
    locks: dict[str, str | None] = {}
    for path in lock_paths(root, chain):
        locks[path] = sha256((root / path).read_bytes()) if (root / path).is_file() else None
        if strict and locks[path] is None:
            raise BuildInputsError(
                cause=f"{key}'s Dockerfile reads {path}, which is not in {root}: the variant is not locked here",
                fix=f"lock it (`build.py lock --target {variant.target_name}`) and commit the lock, or release a "
                "locked variant",
            )
    base = variant.base
    upstream = parse_reference(base.upstream) if base.upstream else None
    pinned = None
    if base.digest is not None and upstream is not None and upstream.pinned is not None:
        pinned = PinnedBase(variant.base_name, upstream.pinned, base.digest)
    return BuildInputs(key, pinned, variant.base_name, locks)


def lock_uri(source_repository: str, commit: str, path: str) -> str:
    """A lock file of the source as a resolvedDependency's uri (SPDX's VCS form: git+URL@REVISION#PATH)."""
    return f"git+{source_repository}@{commit}#{path}"
