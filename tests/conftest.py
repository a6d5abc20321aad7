"""The tree's fixtures: the repository root and matrix.yaml (for every folder), and the integration tier's
(tests/support/integration.py), whose marker tests/support/tiers.py enforces.

This conftest also loads inside the image and on bare GPU hosts (tests/conformance and tests/precision_check run
there, scripts/suite-tests-in-image.sh and gpu/*.sh), with only the standard library, torch and pytest: whatever
more a fixture needs, it imports when it runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytorch_cuda.matrix.build_matrix import Matrix

# The integration tier's fixtures, and the guard that a test needing a real part is marked integration.
pytest_plugins = ["tests.support.integration", "tests.support.tiers"]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def matrix() -> Matrix:
    from pytorch_cuda.matrix.build_matrix import load_matrix

    return load_matrix(ROOT / "matrix.yaml")


@pytest.fixture
def matrix_text() -> str:
    return (ROOT / "matrix.yaml").read_text()
