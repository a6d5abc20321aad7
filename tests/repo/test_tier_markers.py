"""The tier is a marker that collection enforces (tests/support/tiers.py): pytest, run on probe test files with the
tree's two plugins, refuses each way a test can need a real part unmarked, and collects the same tests marked."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from tests.support.tiers import REAL_PART_HELPERS

ROOT = Path(__file__).resolve().parents[2]
INI = """[pytest]
markers =
    integration: the integration tier
    engine_builds: runs build.py
"""
# probe name -> (its module's text without a marker, what the refusal names)
PROBES = {
    "test_browser_probe": (
        "def test_page(chromium):\n    assert chromium\n",
        "test_browser_probe.py::test_page (fixture chromium)",
    ),
    "test_postgres_probe": (
        "def test_store(postgres):\n    assert postgres.port\n",
        "test_postgres_probe.py::test_store (fixture postgres)",
    ),
    "test_engine_probe": (
        "def test_image(built):\n    assert built\n",
        "test_engine_probe.py::test_image (fixture built, fixture client)",
    ),
    "test_registry_probe": (
        "from tests.support import local_registry as registry\n\n\ndef test_push():\n    registry.require_registry()\n",
        "test_registry_probe.py::test_push (imports tests.support.local_registry)",
    ),
    "test_server_probe": (
        "from tests.support.postgres_server import running_server\n\n\n"
        "def test_server():\n    with running_server():\n        pass\n",
        "test_server_probe.py::test_server (imports tests.support.postgres_server)",
    ),
    "test_build_probe": (
        "import pytest\n\n\n@pytest.mark.engine_builds\ndef test_build():\n    pass\n",
        "test_build_probe.py::test_build (marked engine_builds)",
    ),
}
UNIT = "def test_plain():\n    assert 1 + 1 == 2\n"


def _collect(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (folder / "pytest.ini").write_text(INI)
    (folder / "test_unit_probe.py").write_text(UNIT)
    plugins = ["-p", "no:cacheprovider", "-p", "tests.support.integration", "-p", "tests.support.tiers"]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *plugins, *args],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_test_that_needs_a_real_part_unmarked_stops_collection_naming_it_and_why(tmp_path: Path) -> None:
    for name, (text, _) in PROBES.items():
        (tmp_path / f"{name}.py").write_text(text)
    done = _collect(tmp_path, "-m", "not integration")
    assert done.returncode == 4, done.stdout + done.stderr  # pytest's usage error
    for _, named in PROBES.values():
        assert named in done.stderr, done.stderr
    assert "test_unit_probe" not in done.stderr
    assert "pytestmark = pytest.mark.integration" in done.stderr


def test_the_same_tests_marked_integration_are_collected_and_the_unit_tier_leaves_them_out(tmp_path: Path) -> None:
    for name, (text, _) in PROBES.items():
        (tmp_path / f"{name}.py").write_text(f"import pytest\n\npytestmark = pytest.mark.integration\n{text}")
    everything = _collect(tmp_path)
    assert everything.returncode == 0, everything.stdout + everything.stderr
    assert "7 tests collected" in everything.stdout
    unit = _collect(tmp_path, "-m", "not integration")
    assert unit.returncode == 0, unit.stdout + unit.stderr
    assert "1/7 tests collected (6 deselected)" in unit.stdout
    assert "test_unit_probe.py::test_plain" in unit.stdout


def test_each_real_part_helper_the_guard_names_exists() -> None:
    """A helper renamed or moved would leave the guard watching a name nothing imports."""
    for name in sorted(REAL_PART_HELPERS):
        assert importlib.util.find_spec(name) is not None, name


def test_the_unit_tier_is_the_tests_not_marked_integration() -> None:
    script = (ROOT / "scripts/test.sh").read_text()
    assert '-m "not integration"' in script
