"""The tier is a marker, and collection holds it: a test that needs a real part (the Docker engine, the registry,
PostgreSQL, a browser) must be marked `integration`, or the unit tier (`-m "not integration"`) would run it.

A pytest plugin of tests/conftest.py. A test needs a real part when it asks for a fixture of the integration plugin
(tests/support/integration.py: the engine, the built image, chromium, PostgreSQL, the loopback servers), is marked
engine_builds, or its module imports a helper that drives a real part (REAL_PART_HELPERS). Collection stops, naming
each unmarked one. Standard library and pytest only: this conftest also loads inside the image."""

from __future__ import annotations

from types import ModuleType

import pytest

INTEGRATION = "integration"
ENGINE_BUILDS = "engine_builds"
INTEGRATION_FIXTURES = "tests.support.integration"
# The helpers that start or talk to a real part: a test module holding any of them (the module itself, or a name
# from it) runs that part.
REAL_PART_HELPERS = frozenset(
    {
        "tests.support.containers",  # containers of the built image (the Docker SDK)
        "tests.support.docker_cli",  # `docker run` through the CLI
        "tests.support.layers",  # an image's layers, read from the engine
        "tests.support.tiny_images",  # small images built on the engine
        "tests.support.registry_images",  # images pushed to the local registry
        "tests.support.local_registry",  # the registry on 127.0.0.1:5000
        "tests.support.postgres_server",  # a PostgreSQL cluster from Debian's binaries
        "pytorch_cuda.precision_report.browser",  # headless chromium
    }
)


def _helpers_held(module: ModuleType | None) -> list[str]:
    if module is None:
        return []
    held = set()
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        if name in REAL_PART_HELPERS:
            held.add(name)
    return sorted(held)


def real_parts(item: pytest.Item) -> list[str]:
    """Why ITEM needs a real part: the integration fixtures it asks for, the engine_builds marker, the helpers of
    REAL_PART_HELPERS its module imports (empty: it needs none)."""
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs if info is not None else {}
    reasons = sorted(
        f"fixture {name}"
        for name, fixtures in definitions.items()
        if fixtures and fixtures[-1].func.__module__ == INTEGRATION_FIXTURES and not name.startswith("_")
    )
    if item.get_closest_marker(ENGINE_BUILDS) is not None:
        reasons.append(f"marked {ENGINE_BUILDS}")
    reasons += [f"imports {name}" for name in _helpers_held(getattr(item, "module", None))]
    return reasons


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker: the unit tier is `-m "not integration"`
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    unmarked = []
    for item in items:
        if item.get_closest_marker(INTEGRATION) is None and (reasons := real_parts(item)):
            unmarked.append(f"  {item.nodeid} ({', '.join(reasons)})")
    if unmarked:
        raise pytest.UsageError(
            "these tests need a real part (the Docker engine, the registry, PostgreSQL, a browser) but are not "
            "marked integration, so the unit tier would run them: add `pytestmark = pytest.mark.integration` to "
            "their module (tests/support/tiers.py):\n" + "\n".join(unmarked)
        )
