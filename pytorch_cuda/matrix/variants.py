"""Resolve CLI target names into concrete image variants (target x flavour x base)."""

from __future__ import annotations

from dataclasses import dataclass

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.bases import Base
from pytorch_cuda.matrix.build_matrix import Flavour, Matrix, Target, flavour_applies
from pytorch_cuda.matrix.target_selection import did_you_mean, unknown_target


@dataclass(frozen=True)
class Variant:
    """One image to build: a target (CUDA stack) in a flavour on a base."""

    target_name: str
    target: Target
    flavour_name: str
    flavour: Flavour
    base_name: str
    base: Base
    is_default_target: bool
    is_default_flavour: bool

    @property
    def key(self) -> str:
        """The folder under images/ and the short name of the variant, e.g. ``cu128-runtime``."""
        return f"{self.target_name}-{self.flavour_name}"

    @property
    def torch_version(self) -> str:
        """What ``torch.__version__`` prints in the image, e.g. ``2.9.1+cu128``."""
        return f"{self.target.torch}+{self.target.local_version}"

    @property
    def cudnn_major_minor(self) -> str:
        return ".".join(self.target.cudnn.split(".")[:2])


def all_variants(matrix: Matrix) -> list[Variant]:
    """Every target x flavour the matrix declares, on the default base, in a stable order."""
    return [
        _variant(matrix, target_name, flavour_name)
        for target_name in sorted(matrix.targets)
        for flavour_name in sorted(matrix.flavours)
        if flavour_applies(matrix.targets[target_name], matrix.flavours[flavour_name])
    ]


def resolve_target(matrix: Matrix, requested: str) -> str:
    """Map a --target value (name or alias) to the canonical target name."""
    names = matrix.target_names()
    if requested not in names:
        raise unknown_target(matrix, requested, groups=False)
    return names[requested]


def resolve_flavour(matrix: Matrix, requested: str | None) -> str:
    name = requested or matrix.project.default_flavour
    if name not in matrix.flavours:
        raise UserError(
            cause=f"--flavour {name!r} is not a flavour of the matrix{did_you_mean(name, matrix.flavours)}",
            fix=f"use one of: {', '.join(sorted(matrix.flavours))}",
        )
    return name


def select_variant(matrix: Matrix, target: str, flavour: str | None = None) -> Variant:
    target_name, flavour_name = resolve_target(matrix, target), resolve_flavour(matrix, flavour)
    if not flavour_applies(matrix.targets[target_name], matrix.flavours[flavour_name]):
        having = sorted(name for name, t in matrix.targets.items() if t.toolkit_wheels)
        raise UserError(
            cause=f"--flavour {flavour_name!r} needs the CUDA compiler from the target's nvidia-* wheels, and target "
            f"{target_name!r} has none (its wheel family's nvidia-cuda-nvcc wheel ships ptxas and libnvvm only, "
            "no nvcc)",
            fix=f"build it for a target with toolkit_wheels: {', '.join(having)}",
        )
    return _variant(matrix, target_name, flavour_name)


def _variant(matrix: Matrix, target_name: str, flavour_name: str) -> Variant:
    return Variant(
        target_name=target_name,
        target=matrix.targets[target_name],
        flavour_name=flavour_name,
        flavour=matrix.flavours[flavour_name],
        base_name=matrix.default_base,
        base=matrix.bases[matrix.default_base],
        is_default_target=target_name == matrix.project.default_target,
        is_default_flavour=flavour_name == matrix.project.default_flavour,
    )
