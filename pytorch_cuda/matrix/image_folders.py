"""Where a checkout keeps the rendered images: `images/`, one folder per variant (`images/<variant key>/`), and the
files every room reads there. The one place these paths are spelled."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from pytorch_cuda.matrix.variants import Variant

IMAGES_DIR: Final = "images"
DOCKERFILE: Final = "Dockerfile"
REQUIREMENTS: Final = "requirements.txt"
FLAVOUR_REQUIREMENTS: Final = "requirements-flavour.txt"


def images_dir(root: Path) -> Path:
    """The checkout's rendered images: `root/images`."""
    return root / IMAGES_DIR


def variant_dir(root: Path, variant: Variant) -> Path:
    """One variant's folder: `root/images/<variant key>`."""
    return images_dir(root) / variant.key
