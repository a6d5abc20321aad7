"""tests/ is laid out like the code (issue 54): a test module imports no other test module, conftest or loose helper
(what several tests share lives in tests/support/, one module per concept), and every folder of tests is named after
the package folder it tests (tests/pytorch_cuda/bump/ tests pytorch_cuda/bump/, tests/conformance/support/probes/
tests conformance/support/probes/); tests/repo/ (the repository's own rules) and tests/support/ are the two others."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.synthetic_tree import write_tree

ROOT = Path(__file__).resolve().parents[2]
SHARED = "tests.support"
OWN_FOLDERS = frozenset({"repo", "support", "fixtures"})  # tests/ folders that mirror no package folder


def _python_files(tests: Path) -> list[Path]:
    return sorted(p for p in tests.rglob("*.py") if "__pycache__" not in p.parts)


def _imported(node: ast.AST) -> list[str]:
    """The modules an import statement names; a relative import as its dots (``.helpers``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return ["." * node.level + (node.module or "")]
    return []


def imports_of_other_tests(root: Path = ROOT) -> list[str]:
    """Every import, anywhere in a module under tests/ (a lazy one inside a function too), of a module of tests/
    outside tests/support/, and every relative import: `FILE:LINE imports MODULE`."""
    found = []
    for path in _python_files(root / "tests"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            for module in _imported(node):
                shared = module == SHARED or module.startswith(f"{SHARED}.")
                if module.startswith(".") or (module.split(".")[0] == "tests" and not shared):
                    found.append(f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)} imports {module}")
    return found


def folders_mirroring_nothing(root: Path = ROOT) -> list[str]:
    """Folders under tests/ that hold test modules but name no folder of the repository (tests/X/Y for X/Y)."""
    tests = root / "tests"
    folders = {p.parent for p in tests.rglob("test_*.py") if "__pycache__" not in p.parts}
    return sorted(
        str(folder.relative_to(root))
        for folder in folders
        if folder != tests
        and folder.relative_to(tests).parts[0] not in OWN_FOLDERS
        and not (root / folder.relative_to(tests)).is_dir()
    )


def test_no_test_module_imports_another_test_module() -> None:
    found = imports_of_other_tests()
    assert not found, (
        "tests import helpers from other test modules (move what they share into a module of tests/support/, "
        f"one per concept, and import it from there): {found}"
    )


def test_an_import_from_another_test_module_is_seen(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "tests/support/helpers.py": "from tests.support.other import thing\n",
            "tests/pkg/test_a.py": "from tests.support import helpers\nimport tests.support.other\n",
            "tests/pkg/test_b.py": "from tests.pkg.test_a import helper\n",
            "tests/pkg/test_c.py": "def f() -> None:\n    from tests.pkg import conftest\n",
            "tests/pkg/test_d.py": "from .test_a import helper\nimport tests.pkg.loose\n",
        },
    )
    assert imports_of_other_tests(tmp_path) == [
        "tests/pkg/test_b.py:1 imports tests.pkg.test_a",
        "tests/pkg/test_c.py:2 imports tests.pkg",
        "tests/pkg/test_d.py:1 imports .test_a",
        "tests/pkg/test_d.py:2 imports tests.pkg.loose",
    ]


def test_every_folder_of_tests_mirrors_a_package_folder() -> None:
    found = folders_mirroring_nothing()
    assert not found, (
        "folders under tests/ that name no folder of the repository (tests/X/Y holds the tests of X/Y: move them "
        f"to the folder of the code they test): {found}"
    )


def test_a_folder_that_mirrors_nothing_is_seen(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "conformance/support/probes/nvml.py": "",
            "tests/conformance/support/probes/test_nvml.py": "",
            "tests/conformance/test_breakage.py": "",
            "tests/repo/test_docs.py": "",
            "tests/conformance/probes/test_devices.py": "",  # conformance/probes/ does not exist
            "tests/misc/test_other.py": "",
        },
    )
    assert folders_mirroring_nothing(tmp_path) == ["tests/conformance/probes", "tests/misc"]
