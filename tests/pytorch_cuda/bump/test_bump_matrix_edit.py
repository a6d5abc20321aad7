"""bump rewrites one pin of matrix.yaml and nothing else: comments, quotes and the other pins stay."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pytorch_cuda.bump.matrix_edit import set_scalar
from pytorch_cuda.errors import MatrixError

TEXT = (Path(__file__).resolve().parents[3] / "matrix.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "path",
    [
        ("targets", "cu126", "torch"),
        ("python_packages", "numpy"),
        ("flavours", "jupyter", "python_packages", "nbclient"),
    ],
)
def test_one_pin_moves_and_every_other_line_stays(path: tuple[str, ...]) -> None:
    changed = set_scalar(TEXT, path, "9.9.9")
    data, before = yaml.safe_load(changed), yaml.safe_load(TEXT)
    node, old = data, before
    for key in path[:-1]:
        node, old = node[key], old[key]
    assert node[path[-1]] == "9.9.9"
    node[path[-1]] = old[path[-1]]
    assert data == before  # nothing else moved
    differing = [(a, b) for a, b in zip(TEXT.splitlines(), changed.splitlines(), strict=True) if a != b]
    assert len(differing) == 1
    assert differing[0][1].endswith('"9.9.9"')


def test_a_key_at_another_depth_is_not_taken_for_it() -> None:
    # flavours.devel.python_packages comes before the top-level python_packages in the file
    changed = set_scalar(TEXT, ("python_packages", "pytest"), "9.3.0")
    assert yaml.safe_load(changed)["flavours"]["devel"]["python_packages"] == {"ninja": "1.13.2"}
    assert yaml.safe_load(changed)["python_packages"]["pytest"] == "9.3.0"


def test_a_missing_key_is_a_matrix_error() -> None:
    with pytest.raises(MatrixError, match=r"no key targets\.cu999"):
        set_scalar(TEXT, ("targets", "cu999", "torch"), "2.9.2")
