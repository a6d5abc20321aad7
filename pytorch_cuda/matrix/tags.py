"""Image tags: one immutable full tag per variant and the moving aliases."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.variants import Variant


@dataclass(frozen=True)
class TagSet:
    repository: str
    full: str
    aliases: tuple[str, ...]

    @property
    def full_ref(self) -> str:
        return f"{self.repository}:{self.full}"

    @property
    def alias_refs(self) -> tuple[str, ...]:
        return tuple(f"{self.repository}:{alias}" for alias in self.aliases)

    @property
    def all_refs(self) -> tuple[str, ...]:
        return (self.full_ref, *self.alias_refs)


def full_tag(variant: Variant) -> str:
    """Immutable tag in the style of pytorch/pytorch, e.g. ``2.9.1-cuda12.8-cudnn9.10-py3.13-runtime``."""
    return (
        f"{variant.target.torch}-cuda{variant.target.cuda}-cudnn{variant.cudnn_major_minor}"
        f"-py{variant.base.python}-{variant.flavour_name}"
    )


def alias_tags(matrix: Matrix, variant: Variant) -> tuple[str, ...]:
    """Moving aliases: ``<series>-<target or alias>-<flavour>``; ``v<series>`` for the default image."""
    series = matrix.project.series
    names = (variant.target_name, *variant.target.aliases)
    aliases = [f"{series}-{name}-{variant.flavour_name}" for name in names if name != "default"]
    if variant.is_default_target:
        aliases.append(f"v{series}-{variant.flavour_name}")
        if variant.is_default_flavour:
            aliases.append(f"v{series}")
    return tuple(aliases)


def tag_set(matrix: Matrix, variant: Variant) -> TagSet:
    return TagSet(repository=matrix.project.repository, full=full_tag(variant), aliases=alias_tags(matrix, variant))


def candidate_ref(matrix: Matrix, variant: Variant, build_id: str) -> str:
    """Temporary tag a build lands on before its checks pass."""
    return f"{matrix.project.repository}:candidate-{variant.key}-{build_id}"


def candidate_by_digest(digests: Mapping[str, str], variant_key: str) -> str | None:
    """`REPOSITORY@sha256:...` of the variant's pushed candidate (the tag `REPOSITORY:candidate-<variant>-<id>`
    among a push's digests, the parent's candidates beside it), or None when none was pushed."""
    marker = f":candidate-{variant_key}-"
    for ref, digest in digests.items():
        repository, found, _ = ref.partition(marker)
        if found:
            return f"{repository}@{digest}"
    return None
