"""Build plans for the unit tests: one place that knows make_plan's test defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytorch_cuda.image_build.build_plan import BuildPlan, make_plan
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.labels import BuildFacts
from pytorch_cuda.matrix.variants import Variant, select_variant

FACTS = BuildFacts("abc", "2026-12-02T00:00:00Z")


def cu12_plan(matrix: Matrix, root: Path, variant: Variant | None = None, **flags: Any) -> BuildPlan:
    """The plan of the cu12 runtime (or of `variant`), with no CA bundle unless `flags` name one."""
    settings: dict[str, Any] = {"build_id": "t", "ca_bundle": None, "ca_source": None, "facts": FACTS, **flags}
    return make_plan(matrix, variant or select_variant(matrix, "cu12"), root=root, **settings)
