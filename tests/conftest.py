"""The tree's fixtures: the repository root and matrix.yaml (for every folder), and the integration tier's
(tests/support/integration.py).

This conftest also loads inside the image and on bare GPU hosts (tests/conformance and tests/precision_check run
there, scripts/suite-tests-in-image.sh and gpu/*.sh), with only the standard library, torch and pytest: whatever
more a fixture needs, it imports when it runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytorch_cuda.matrix.build_matrix import Matrix

INTEGRATION_FIXTURES = "tests.support.integration"
pytest_plugins = [INTEGRATION_FIXTURES]

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


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker: the unit tier is `-m "not integration"`
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tier is a marker: a test that asks for an integration fixture (tests/support/integration.py: the engine,
    the built image, the loopback servers), or is marked engine_builds, must be marked integration, or the unit tier
    would run it. Collection stops, naming them."""
    unmarked = []
    for item in items:
        if item.get_closest_marker("integration") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        definitions = info.name2fixturedefs if info is not None else {}
        used = sorted(
            name
            for name, fixtures in definitions.items()
            if fixtures and fixtures[-1].func.__module__ == INTEGRATION_FIXTURES and not name.startswith("_")
        )
        if used or item.get_closest_marker("engine_builds") is not None:
            unmarked.append(f"  {item.nodeid} ({', '.join(used) or 'engine_builds'})")
    if unmarked:
        raise pytest.UsageError(
            "these tests use the integration tier's fixtures but are not marked integration "
            "(add `pytestmark = pytest.mark.integration` to their module):\n" + "\n".join(unmarked)
        )
