"""Image labels: the pins (static, rendered into the Dockerfile) and the OCI build facts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.variants import Variant

LABEL_PREFIX = "dev.pytorch-cuda"


@dataclass(frozen=True)
class BuildFacts:
    """What only the build knows: the source revision and when it was made."""

    revision: str
    created: str
    # `created` in seconds: the image config's creation time and its history's; None: not stamped
    created_epoch: int | None = None


def given_source_date_epoch(environ: Mapping[str, str]) -> int | None:
    """$SOURCE_DATE_EPOCH where set to whole seconds (the reproducible-builds convention for a build without git:
    it stands in for the commit's time); None otherwise."""
    given = environ.get("SOURCE_DATE_EPOCH", "").strip()
    return int(given) if given.isdigit() else None


def static_labels(matrix: Matrix, variant: Variant) -> dict[str, str]:
    """Labels that depend only on the matrix; rendered into the committed Dockerfile."""
    target = variant.target
    return {
        "org.opencontainers.image.title": f"{matrix.project.name} {variant.key}",
        "org.opencontainers.image.description": (
            f"PyTorch {variant.torch_version} with CUDA {target.cuda}, cuDNN {target.cudnn}, "
            f"NCCL {target.nccl} ({variant.flavour_name})"
        ),
        "org.opencontainers.image.source": str(matrix.project.source),
        "org.opencontainers.image.licenses": "BSD-3-Clause",
        f"{LABEL_PREFIX}.target": variant.target_name,
        f"{LABEL_PREFIX}.flavour": variant.flavour_name,
        f"{LABEL_PREFIX}.torch": variant.torch_version,
        f"{LABEL_PREFIX}.cuda": target.cuda,
        f"{LABEL_PREFIX}.cudnn": target.cudnn,
        f"{LABEL_PREFIX}.nccl": target.nccl,
        f"{LABEL_PREFIX}.triton": target.triton,
        f"{LABEL_PREFIX}.python": variant.base.python,
        f"{LABEL_PREFIX}.min-driver": target.min_driver,
    }


def build_labels(variant: Variant, full_tag: str, facts: BuildFacts) -> dict[str, str]:
    """Labels passed with --label at build time; they change the config, never a layer."""
    return {
        "org.opencontainers.image.version": full_tag,
        "org.opencontainers.image.revision": facts.revision,
        "org.opencontainers.image.created": facts.created,
        f"{LABEL_PREFIX}.variant": variant.key,
    }
