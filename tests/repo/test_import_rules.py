"""The packages' import rules (what runs where): the contract imports only the standard library, the suite never
imports the builder and the builder neither the suite nor precision_check, nothing imports a ``_private`` module
from outside the package that holds it, and the folder-level import graph (tests/support/import_graph.py) has no two-way
import and no arrow on a cycle."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.support import import_graph
from tests.support.synthetic_tree import write_tree

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = import_graph.PRODUCT
SOURCES = (*FIRST_PARTY, "tests", "gpu", "benchmarks", "scripts", "examples")


def _python_files(*folders: str, root: Path = ROOT) -> list[Path]:
    return sorted(p for folder in folders for p in (root / folder).rglob("*.py") if "__pycache__" not in p.parts)


def _module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(parts: list[str], root: Path = ROOT) -> bool:
    path = root.joinpath(*parts)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def private_parent(module: str, root: Path = ROOT) -> str | None:
    """The package that holds the first ``_private`` module of a first-party name, else None.

    A ``_private`` function or class (``from a.b import _helper``) is not a module and does not count."""
    parts = module.split(".")
    if parts[0] not in FIRST_PARTY:
        return None
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__") and _is_module(parts[: index + 1], root):
            return ".".join(parts[:index])
    return None


def test_the_contract_imports_only_the_standard_library_and_itself() -> None:
    allowed = set(sys.stdlib_module_names) | {"__future__", "pytorch_cuda_contract"}
    for path in _python_files("pytorch_cuda_contract"):
        roots = {name.split(".")[0] for name in import_graph.imported_names(path)}
        assert roots <= allowed, f"{path.relative_to(ROOT)} imports {sorted(roots - allowed)}"


@pytest.mark.parametrize("package", ["conformance", "pytorch_cuda_entry", "precision_check", "pytorch_cuda_sbom"])
def test_what_runs_in_the_image_never_imports_the_builder(package: str) -> None:
    for path in _python_files(package):
        builder = [name for name in import_graph.imported_names(path) if name.split(".")[0] == "pytorch_cuda"]
        assert not builder, f"{path.relative_to(ROOT)} imports the builder: {builder}"


@pytest.mark.parametrize(
    "package", ["pytorch_cuda", "pytorch_cuda_contract", "pytorch_cuda_entry", "pytorch_cuda_sbom"]
)
def test_the_builder_imports_neither_the_suite_nor_precision_check(package: str) -> None:
    """The other direction: what the suite and precision-check write (results files, precision-check reports) the
    builder reads through the contract (results_file, precision_check_file, advice), never through their code. No
    packaging exception: the wheel carries pytorch_cuda* only (pyproject.toml)."""
    for path in _python_files(package):
        found = [n for n in import_graph.imported_names(path) if n.split(".")[0] in ("conformance", "precision_check")]
        assert not found, f"{path.relative_to(ROOT)} imports {found}"
    assert not import_graph.build(ROOT).builder_arrows_into(("conformance", "precision_check"))


def argparse_outside_the_command_layer(root: Path = ROOT) -> list[str]:
    """The builder's modules outside pytorch_cuda/cli/ that import argparse: a flow that takes a Namespace."""
    cli = root / "pytorch_cuda" / "cli"
    return [
        str(path.relative_to(root))
        for path in _python_files("pytorch_cuda", root=root)
        if cli not in path.parents and any(n.split(".")[0] == "argparse" for n in import_graph.imported_names(path))
    ]


def test_only_the_command_layer_parses_arguments(tmp_path: Path) -> None:
    """Each flow (bump, audit, release) is a function of its room that takes a typed request: no room below cli/
    imports argparse, so no argparse.Namespace crosses out of the command layer (cli/bumping.bump ran bump's whole
    flow on one)."""
    assert argparse_outside_the_command_layer() == []
    (tmp_path / "pytorch_cuda" / "cli").mkdir(parents=True)
    (tmp_path / "pytorch_cuda" / "cli" / "bumping.py").write_text("import argparse\n", encoding="utf-8")
    (tmp_path / "pytorch_cuda" / "bump").mkdir()
    flow = "from argparse import Namespace\n\ndef bump(args: Namespace) -> int: ...\n"
    (tmp_path / "pytorch_cuda" / "bump" / "bump_flow.py").write_text(flow, encoding="utf-8")
    assert argparse_outside_the_command_layer(tmp_path) == ["pytorch_cuda/bump/bump_flow.py"]


def test_the_fault_harness_runs_the_suite_as_a_user_would_and_imports_neither_it_nor_the_builder() -> None:
    """fault_coverage runs bare on a GPU host: the standard library and the contract only (its patches/ are
    sitecustomize bodies run inside the suite's processes, where torch is; they import torch, nvidia-ml-py's pynvml and
    nothing of ours)."""
    allowed = set(sys.stdlib_module_names) | {"__future__", "pytorch_cuda_contract", "fault_coverage"}
    for path in _python_files("fault_coverage"):
        roots = {name.split(".")[0] for name in import_graph.imported_names(path)}
        extra = {"torch", "pynvml"} if path.parent.name == "patches" else set()
        assert roots <= allowed | extra, f"{path.relative_to(ROOT)} imports {sorted(roots - allowed - extra)}"


def test_no_private_module_is_imported_from_outside_its_package() -> None:
    outside = []
    for path in _python_files(*SOURCES):
        importer = _module_of(path)
        for name in import_graph.imported_names(path):
            parent = private_parent(name)
            if parent is not None and not (importer == parent or importer.startswith(parent + ".")):
                outside.append(f"{path.relative_to(ROOT)}: {name}")
    assert not outside, outside


def test_the_rule_sees_a_private_module() -> None:
    assert private_parent("pytorch_cuda_contract.paths") is None
    assert private_parent("pytorch_cuda.package_index.simple_index._from_json") is None  # a function, not a module
    assert private_parent("conformance.support.probes.nvml") is None
    assert private_parent("torch._inductor.config") is None


# The suite's helper roles, lowest floor first: a role imports only the roles below it.
SUITE_FLOORS = ("probes", "workloads", "processes")


def test_no_two_folders_import_each_other() -> None:
    assert import_graph.build(ROOT).two_way() == []


def test_no_import_arrow_climbs_back_up() -> None:
    """No arrow points at a folder that already depends on the importer: the folders have floors."""
    assert import_graph.build(ROOT).upward() == []


def test_the_suite_helpers_import_only_the_roles_below_them() -> None:
    upward = []
    for path in _python_files(*(f"conformance/support/{role}" for role in SUITE_FLOORS)):
        floor = SUITE_FLOORS.index(path.parent.name)
        for name in import_graph.imported_names(path):
            parts = name.split(".")
            if parts[:2] == ["conformance", "support"] and len(parts) > 2 and parts[2] in SUITE_FLOORS[floor + 1 :]:
                upward.append(f"{path.relative_to(ROOT)}: {name}")
    assert not upward, upward


def test_the_graph_sees_a_two_way_import_and_its_cycle(tmp_path: Path) -> None:
    for folder in ("conformance", "conformance/support", "conformance/support/probes", "conformance/support/workloads"):
        write_tree(tmp_path, {f"{folder}/__init__.py": ""})
    write_tree(tmp_path, {"conformance/support/probes/a.py": "from conformance.support.workloads.b import run\n"})
    write_tree(
        tmp_path,
        {"conformance/support/workloads/b.py": "def run() -> None:\n    from conformance.support.probes import a\n"},
    )
    write_tree(tmp_path, {"conformance/support/workloads/c.py": "from conformance.support.workloads import b\n"})
    graph = import_graph.build(tmp_path)
    pair = ("conformance/support/probes", "conformance/support/workloads")
    assert graph.two_way() == [pair]
    assert graph.upward() == [pair, pair[::-1]]
    write_tree(tmp_path, {"conformance/support/workloads/b.py": "def run() -> None:\n    pass\n"})
    assert import_graph.build(tmp_path).two_way() == []
    assert import_graph.build(tmp_path).upward() == []


def module_names(root: Path = ROOT) -> dict[str, list[str]]:
    """Every module and package name of the product's packages and the benchmarks -> where it stands
    (``__main__``/``conftest`` aside)."""
    names: dict[str, list[str]] = {}
    for path in _python_files(*FIRST_PARTY, "benchmarks", root=root):
        if path.stem not in ("__main__", "conftest"):
            name = path.parent.name if path.stem == "__init__" else path.stem
            where = path.parent if path.stem == "__init__" else path
            names.setdefault(name, []).append(str(where.relative_to(root)))
    return names


def test_no_module_or_package_name_is_used_twice() -> None:
    """One name, one meaning: two ``probes``, two ``report`` or two ``matrix`` across the product say two things."""
    twice = {name: places for name, places in module_names().items() if len(places) > 1}
    assert not twice, f"names used more than once (rename one of each): {twice}"


def test_a_name_used_twice_is_seen(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pytorch_cuda/probes/__init__.py": "",
            "conformance/support/probes/__init__.py": "",
            "conformance/__main__.py": "",
            "precision_check/__main__.py": "",
        },
    )
    names = module_names(tmp_path)
    assert sorted(names["probes"]) == ["conformance/support/probes", "pytorch_cuda/probes"]
    assert "__main__" not in names


# Packages whose exported names must each mean one thing: the builder, the contract and the suite.
NAMED_PACKAGES = ("pytorch_cuda", "pytorch_cuda_contract", "conformance")
# A module's command line is `main` by Python's convention (python -m), not a name with a meaning of its own.
CONVENTIONAL = frozenset({"main"})


def _defined(node: ast.stmt) -> list[str]:
    """The public names a top-level statement defines: a class, a function, a type alias (``Runner =
    Callable[...]``, ``Name: TypeAlias = ...``) or a constant (``SUITE_DIR: Final = ...``). A constant that only
    passes another module's on under its own name (``RESULTS_PATH = paths.RESULTS_PATH``) names the same thing."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
    return [
        t.id
        for t in targets
        if isinstance(t, ast.Name)
        and t.id[:1].isupper()
        and not (isinstance(value, ast.Attribute) and value.attr == t.id)
    ]


def exported_names(root: Path = ROOT) -> dict[str, set[str]]:
    """Every public top-level class, function and type alias of the named packages -> the packages (folders) that
    define it."""
    names: dict[str, set[str]] = {}
    for path in _python_files(*NAMED_PACKAGES, root=root):
        for node in ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body:
            for name in _defined(node):
                if not name.startswith("_"):
                    names.setdefault(name, set()).add(str(path.parent.relative_to(root)))
    return names


def names_in_two_packages(root: Path = ROOT) -> dict[str, list[str]]:
    return {
        name: sorted(packages)
        for name, packages in exported_names(root).items()
        if len(packages) > 1 and name not in CONVENTIONAL
    }


def test_no_class_or_function_name_is_exported_by_two_packages() -> None:
    """One name, one meaning: ``promote`` in steps and in release, two ``suite_digest`` with two values, or
    ``Runner`` for a GPU runner (matrix), uv (locks) and skopeo (release), say two things under one name. Within one
    package a name is that package's to keep consistent."""
    twice = names_in_two_packages()
    assert not twice, f"public names defined in two packages (rename one of each): {twice}"


def test_a_class_or_function_in_two_packages_is_seen(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pytorch_cuda/steps/move.py": "def promote() -> None:\n    pass\n\ndef _private() -> None: ...\n",
            "pytorch_cuda/release/promoting.py": "class promote:\n    pass\n\ndef _private() -> None: ...\n",
            "conformance/support/a.py": "def main() -> int:\n    return 0\n",
            "pytorch_cuda/cli/b.py": "def main() -> int:\n    return 0\n",
            "pytorch_cuda/image_build/plan.py": "class BuildRequest: ...\n",
            "pytorch_cuda/engine/protocol.py": "class EngineBuild: ...\n",
            "pytorch_cuda/matrix/fleet.py": "class Runner: ...\nLABEL = 'gpu'\nPATH = paths.PATH\n",
            "pytorch_cuda/locks/writing.py": "Runner = Callable[[list[str]], int]\nLABEL = 'x'\n",
            "pytorch_cuda_contract/paths.py": "PATH: Final = '/etc/x'\n",
        },
    )
    assert names_in_two_packages(tmp_path) == {
        "promote": ["pytorch_cuda/release", "pytorch_cuda/steps"],
        "Runner": ["pytorch_cuda/locks", "pytorch_cuda/matrix"],  # a type alias counts
        "LABEL": ["pytorch_cuda/locks", "pytorch_cuda/matrix"],  # and a constant; passing one on does not
    }
    write_tree(tmp_path, {"pytorch_cuda/locks/c.py": "class BuildRequest: ...\n"})  # the same name in another package
    assert names_in_two_packages(tmp_path)["BuildRequest"] == ["pytorch_cuda/image_build", "pytorch_cuda/locks"]


def test_a_relative_import_fails_the_linter(tmp_path: Path) -> None:
    """The floor rules read absolute module names; ruff's TID252 (pyproject.toml) refuses a relative import that
    would slip past them."""
    import subprocess
    import sys

    module = tmp_path / "pytorch_cuda" / "sneaky.py"
    module.parent.mkdir()
    module.write_text("from ..locks import writing\n\nprint(writing)\n")
    ruff = Path(sys.executable).with_name("ruff")
    done = subprocess.run(
        [str(ruff), "check", "--config", str(ROOT / "pyproject.toml"), "--select", "TID", str(module)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "TID252" in done.stdout
