from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def matrix() -> Matrix:
    return load_matrix(ROOT / "matrix.yaml")


@pytest.fixture
def matrix_text() -> str:
    return (ROOT / "matrix.yaml").read_text()
