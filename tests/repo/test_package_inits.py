"""A builder package's ``__init__.py`` only re-exports (issue 54): a docstring, imports, ``__all__`` (and the
distribution's ``__version__``); its logic lives in a named module of the package. The builder's packages are the
product's ``pytorch_cuda*`` ones (the suite and precision_check have their own house)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import import_graph

ROOT = Path(__file__).resolve().parents[2]
ALLOWED_NAMES = {"__all__", "__version__"}


def logic_in(source: str) -> list[str]:
    """What an ``__init__.py`` holds beyond re-exports: one entry per statement, with its line."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # the docstring
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) and t.id in ALLOWED_NAMES for t in targets):
                continue
        found.append(f"line {node.lineno}: {type(node).__name__}")
    return found


def test_every_package_init_only_re_exports() -> None:
    builder = [package for package in import_graph.PRODUCT if package.startswith("pytorch_cuda")]
    inits = sorted(p for package in builder for p in (ROOT / package).rglob("__init__.py"))
    assert len(inits) > 10
    offenders = {str(p.relative_to(ROOT)): logic_in(p.read_text(encoding="utf-8")) for p in inits}
    assert {path: logic for path, logic in offenders.items() if logic} == {}


def test_logic_in_an_init_is_found() -> None:
    assert logic_in('"""doc"""\nfrom a import b\n__all__ = ["b"]\n__version__ = "1"\n') == []
    assert logic_in("def helper() -> int:\n    return 1\n") == ["line 1: FunctionDef"]
    assert logic_in("LIMIT = 3\n") == ["line 1: Assign"]
    assert logic_in("if True:\n    pass\n") == ["line 1: If"]
