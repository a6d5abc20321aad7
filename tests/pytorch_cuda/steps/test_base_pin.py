"""The base pinned by digest: any other base is refused with both digests named; pin-base writes the pin."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytorch_cuda.errors import MatrixError
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.pinned_base import BaseDigestError, write_pin
from pytorch_cuda.steps.base_image import ensure_base
from tests.support.fake_engine import FakeEngine

ROOT = Path(__file__).resolve().parents[3]
PINNED = "sha256:" + "1" * 64
OTHER = "sha256:" + "2" * 64


@pytest.fixture
def matrix() -> Matrix:
    return load_matrix(ROOT / "matrix.yaml")


def test_a_base_with_another_digest_is_refused_naming_both(matrix: Matrix) -> None:
    base = matrix.bases["trixie"].model_copy(update={"digest": PINNED})
    with pytest.raises(BaseDigestError) as refused:
        ensure_base(FakeEngine(images={base.image: OTHER}), base, log=lambda _: None)
    assert f"(present) is {OTHER}, but matrix.yaml pins {PINNED}" in refused.value.cause
    assert "build.py release pin-base" in refused.value.fix
    assert refused.value.exit_status == 2


def test_a_pulled_base_with_another_digest_is_refused(matrix: Matrix) -> None:
    base = matrix.bases["trixie"].model_copy(update={"digest": PINNED})
    with pytest.raises(BaseDigestError, match=r"\(pulled\) is sha256:pulled"):
        ensure_base(FakeEngine(pull_error=None), base, log=lambda _: None)


def test_the_pinned_base_is_used(matrix: Matrix) -> None:
    base = matrix.bases["trixie"].model_copy(update={"digest": PINNED})
    assert ensure_base(FakeEngine(images={base.image: PINNED}), base, log=lambda _: None).image_id == PINNED


def test_pin_base_writes_the_digest_once_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "matrix.yaml"
    shutil.copy(ROOT / "matrix.yaml", path)
    assert write_pin(path, "trixie", PINNED, "pulled as x") is None
    assert write_pin(path, "trixie", OTHER, "bootstrapped by: mmdebstrap ...") == PINNED
    text = path.read_text()
    assert text.count("    digest: ") == 1
    assert text.count("# pinned by build.py release pin-base") == 1
    assert load_matrix(path).bases["trixie"].digest == OTHER
    original = (ROOT / "matrix.yaml").read_text().splitlines()
    assert [line for line in text.splitlines() if "pin-base" not in line and "digest: " not in line] == original


def test_a_malformed_pin_is_a_matrix_error(tmp_path: Path) -> None:
    path = tmp_path / "matrix.yaml"
    shutil.copy(ROOT / "matrix.yaml", path)
    write_pin(path, "trixie", "sha256:short", "x")
    with pytest.raises(MatrixError, match=r"sha256:<64 lower-case hex digits>"):
        load_matrix(path)
