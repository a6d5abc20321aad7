"""The builder's rooms import only rooms on lower floors (tests/support/builder_floors.py, docs/how-it-works.md)."""

from __future__ import annotations

from pathlib import Path

from tests.support import builder_floors, import_graph
from tests.support.synthetic_tree import write_tree

ROOT = Path(__file__).resolve().parents[2]


def test_every_builder_arrow_points_down_a_floor() -> None:
    assert builder_floors.violations(import_graph.build(ROOT)) == []


def _tree(root: Path) -> None:
    for room in ("matrix", "oci", "locks", "engine", "steps", "release"):
        write_tree(root, {f"pytorch_cuda/{room}/__init__.py": ""})
    write_tree(
        root,
        {
            "pytorch_cuda/__init__.py": "",
            "pytorch_cuda/errors.py": "class UserError(Exception): ...\n",
            "pytorch_cuda/matrix/labels.py": "from pytorch_cuda.errors import UserError\nLABEL = 'x'\n",
            "pytorch_cuda/locks/lock.py": "from pytorch_cuda.matrix.labels import LABEL\n",
            "pytorch_cuda/steps/base.py": "from pytorch_cuda.matrix.labels import LABEL\n",
            "pytorch_cuda/release/pin.py": "from pytorch_cuda.matrix.labels import LABEL\n",
            "pytorch_cuda/oci/client.py": "from pytorch_cuda.errors import UserError\n",
            "pytorch_cuda/release/sign.py": "from pytorch_cuda.oci.client import UserError\n",
        },
    )


def test_a_synthetic_tree_that_points_down_passes(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert builder_floors.violations(import_graph.build(tmp_path)) == []


def test_an_upward_import_fails(tmp_path: Path) -> None:
    """render.py taking is_debian_record from bump (the same kind of arrow, matrix reading locks here) was one."""
    _tree(tmp_path)
    write_tree(
        tmp_path, {"pytorch_cuda/matrix/names.py": "def f() -> None:\n    from pytorch_cuda.locks import lock\n"}
    )
    assert builder_floors.violations(import_graph.build(tmp_path)) == [
        "pytorch_cuda/matrix (floor 1) imports pytorch_cuda/locks (floor 2), up: pytorch_cuda/matrix/names.py"
    ]


def test_a_sideways_import_and_a_room_without_a_floor_fail(tmp_path: Path) -> None:
    """release/pin_command.py taking BOOTSTRAP_LABEL from steps/base_image.py (both floor 3) was one."""
    _tree(tmp_path)
    write_tree(
        tmp_path,
        {
            "pytorch_cuda/release/pin.py": "from pytorch_cuda.steps.base import LABEL\n",
            "pytorch_cuda/oven/__init__.py": "",
        },
    )
    assert builder_floors.violations(import_graph.build(tmp_path)) == [
        "pytorch_cuda/oven has no floor: add it to tests/support/builder_floors.py",
        "pytorch_cuda/release (floor 3) imports pytorch_cuda/steps (floor 3), sideways: pytorch_cuda/release/pin.py",
    ]


def test_the_registry_client_reaching_into_release_fails(tmp_path: Path) -> None:
    """The registry client lives in oci (floor 1) so that bump and release share it without one importing the
    other (bump took it from release/oras_client.py); the client reaching back into release climbs three floors."""
    _tree(tmp_path)
    write_tree(tmp_path, {"pytorch_cuda/oci/client.py": "from pytorch_cuda.release.pin import LABEL\n"})
    assert builder_floors.violations(import_graph.build(tmp_path)) == [
        "pytorch_cuda/oci (floor 1) imports pytorch_cuda/release (floor 3), up: pytorch_cuda/oci/client.py"
    ]


def test_the_engine_naming_lock_files_fails(tmp_path: Path) -> None:
    """The engine sits beside matrix (floor 1) since the pipeline hands it the locks room's naming of a lock
    (locks/resolving.installed_lock); engine/build_failure.py reading the lock file names again climbs a floor."""
    _tree(tmp_path)
    write_tree(tmp_path, {"pytorch_cuda/engine/build_failure.py": "from pytorch_cuda.locks.lock import LABEL\n"})
    assert builder_floors.violations(import_graph.build(tmp_path)) == [
        "pytorch_cuda/engine (floor 1) imports pytorch_cuda/locks (floor 2), up: pytorch_cuda/engine/build_failure.py"
    ]


def test_the_package_index_client_reaching_into_bump_or_locks_fails(tmp_path: Path) -> None:
    """The package index client sits on floor 1 so that bump, audit and the locks all read it from below (audit and
    lock took it from bump/simple_index.py); the client naming a project through locks/ climbs a floor again."""
    _tree(tmp_path)
    write_tree(
        tmp_path,
        {
            "pytorch_cuda/bump/__init__.py": "",
            "pytorch_cuda/package_index/__init__.py": "",
            "pytorch_cuda/bump/plan.py": "from pytorch_cuda.package_index.files import LABEL\n",
            "pytorch_cuda/package_index/files.py": "from pytorch_cuda.locks.lock import LABEL\n",
        },
    )
    assert builder_floors.violations(import_graph.build(tmp_path)) == [
        "pytorch_cuda/package_index (floor 1) imports pytorch_cuda/locks (floor 2), up: "
        "pytorch_cuda/package_index/files.py"
    ]
