"""Everything `build.py render` writes, as one: images/ from templates/ and matrix.yaml (render.py), and
matrix.schema.json; and for `render --check`, what of them or of the locks beside them is stale, and which variants
have no lock yet. cli/rendering.py parses the options and prints what this returns."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.locks.resolving import not_locked, stale_locks
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.json_schema import stale_schema, write_schema
from pytorch_cuda.matrix.variants import all_variants
from pytorch_cuda.render import find_stale, render_all, write_rendered
from pytorch_cuda.stale_file import StaleFile


@dataclass(frozen=True)
class RenderCheck:
    """`render --check`'s answer: the stale files (images/, a lock, the schema) and the locks not made yet."""

    stale: tuple[StaleFile, ...]
    not_locked: tuple[str, ...]  # relative to the root: variants that cannot be built until `build.py lock` runs

    @property
    def up_to_date(self) -> bool:
        return not self.stale


def write_outputs(matrix: Matrix, root: Path) -> list[Path]:
    """Render images/ and write matrix.schema.json where they differ; the paths that changed."""
    return write_rendered(render_all(matrix, root / "templates"), root) + write_schema(root)


def check_outputs(matrix: Matrix, root: Path) -> RenderCheck:
    """Write nothing: what `render` would change, the locks whose requirements, parent lock or index changed, and
    the variants whose own lock does not exist yet (not counted as stale: they are reported apart)."""
    variants = all_variants(matrix)
    stale = find_stale(render_all(matrix, root / "templates", root), root) + stale_locks(matrix, variants, root)
    stale += stale_schema(root)
    return RenderCheck(tuple(stale), tuple(not_locked(root, variants, stale)))
