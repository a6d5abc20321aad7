"""Child flavours: a flavour with a parent is built FROM the parent's image and adds to it."""

from __future__ import annotations

from dataclasses import replace

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.manifest_writer import build_manifest
from pytorch_cuda.matrix.tags import tag_set
from pytorch_cuda.matrix.variants import Variant, select_variant


def parent_variant(matrix: Matrix, variant: Variant) -> Variant | None:
    """The variant this one is built FROM, or None for a root flavour (built from the OS base)."""
    if variant.flavour.parent is None:
        return None
    return select_variant(matrix, variant.target_name, variant.flavour.parent)


def lineage(matrix: Matrix, variant: Variant) -> list[Variant]:
    """The variant and its ancestors, root first: the order they must be built in."""
    chain = [variant]
    while (parent := parent_variant(matrix, chain[0])) is not None:
        chain.insert(0, parent)
    return chain


def parent_ref(matrix: Matrix, variant: Variant) -> str | None:
    """The parent's immutable tag: the default FROM of a child's Dockerfile."""
    parent = parent_variant(matrix, variant)
    return tag_set(matrix, parent).full_ref if parent is not None else None


def toolkit_wheel(family: str, short_name: str) -> str:
    """The wheel name of a CUDA component: nvidia-cuda-nvcc-cu12 (CUDA 12), nvidia-cuda-nvcc (CUDA 13)."""
    return f"nvidia-{short_name}-{family}" if family == "cu12" else f"nvidia-{short_name}"


def flavour_packages(variant: Variant) -> dict[str, str]:
    """What the flavour adds to its parent's venv: wheel name -> exact version."""
    packages: dict[str, str] = {}
    if variant.flavour.cuda_toolkit:
        for short, version in sorted(variant.target.toolkit_wheels.items()):
            packages[toolkit_wheel(variant.target.wheel_family, short)] = version
    packages.update(sorted(variant.flavour.python_packages.items()))
    return packages


def flavour_requirements_txt(variant: Variant) -> str:
    lines = [
        "# Generated from matrix.yaml by `python build.py render`. Do not edit.",
        f"# What the {variant.flavour_name} flavour adds to the {variant.flavour.parent} image's venv;",
        "# `build.py lock` resolves it, with the parent's lock as constraints, into requirements-flavour.lock.",
        *(f"{name}=={version}" for name, version in flavour_packages(variant).items()),
    ]
    return "\n".join(lines) + "\n"


def child_manifest_json(matrix: Matrix, variant: Variant) -> str:
    manifest = build_manifest(matrix, variant)
    return replace(manifest, parent=variant.flavour.parent, flavour_packages=flavour_packages(variant)).as_text()
