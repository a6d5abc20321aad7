"""What `build.py render` writes and `render --check` reports, as one answer (pytorch_cuda/render_outputs.py):
the committed tree is up to date with its not-yet-locked variants named apart; a changed template makes its
Dockerfiles stale until `render` writes them again."""

from __future__ import annotations

import shutil
from pathlib import Path

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.render_outputs import check_outputs, write_outputs


def test_the_committed_tree_is_up_to_date_and_names_the_locks_not_made_yet(matrix: Matrix, root: Path) -> None:
    checked = check_outputs(matrix, root)
    assert checked.up_to_date, checked.stale
    assert "images/cu130-runtime/requirements.lock" in checked.not_locked  # download.pytorch.org: not from here
    assert "images/cu128-runtime/requirements.lock" not in checked.not_locked


def test_a_changed_template_is_stale_until_render_writes_it(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    for folder in ("templates", "images"):
        shutil.copytree(root / folder, tmp_path / folder)
    for name in ("matrix.yaml", "matrix.schema.json"):
        shutil.copy2(root / name, tmp_path / name)
    template = tmp_path / "templates" / "base.Dockerfile.j2"
    template.write_text(template.read_text(encoding="utf-8") + "# a change\n", encoding="utf-8")
    stale = {str(s.path) for s in check_outputs(matrix, tmp_path).stale}
    assert "images/cu128-runtime/Dockerfile" in stale
    assert not check_outputs(matrix, tmp_path).up_to_date
    changed = {str(p) for p in write_outputs(matrix, tmp_path)}  # relative to the root, as `render --json` says
    assert "images/cu128-runtime/Dockerfile" in changed
    assert check_outputs(matrix, tmp_path).up_to_date
