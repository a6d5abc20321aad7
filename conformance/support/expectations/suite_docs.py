"""The suite's two tables that must not go stale, written from its code: the checks (conformance/README.md: every
``test_*`` of ``conformance/test_*.py``, its marker and its docstring's first paragraph) and the bounds
(docs/conformance-bounds.md: each bound as the constants of bounds.py and the test modules say it now).

Standard library only, and it never imports a test module (they import torch): the test modules are read with
``ast``. ``python -m conformance.support.expectations.suite_docs`` rewrites the tables between their
``<!-- suite:start -->`` and ``<!-- suite:end -->`` lines; ``--check`` exits 1 when a page differs
(tests/repo/test_suite_docs.py runs it). A bound changed in code (the speed floors of issue 37) needs one re-run.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.support import SUITE_SOURCE
from conformance.support.expectations.bound_table import bound_rows, bounds_tables

ROOT: Final = SUITE_SOURCE.parent
BLOCK: Final = re.compile(r"(<!-- suite:start [^>]*-->\n).*?(<!-- suite:end -->)", re.DOTALL)
MARKER_NAMES: Final = ("cpu", "gpu", "multigpu")


@dataclass(frozen=True)
class Check:
    module: str
    name: str
    params: str  # "[fp16,bf16]", or "" without parameters
    markers: str  # "gpu", "gpu, informational"
    doc: str  # the docstring's first paragraph, on one line


def _mark_names(decorators: Sequence[ast.expr]) -> list[str]:
    names = []
    for node in decorators:
        target = node.func if isinstance(node, ast.Call) else node
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute):
            names.append(target.attr)  # pytest.mark.<name>
    return names


def _param_ids(decorators: Sequence[ast.expr]) -> str:
    ids: list[str] = []
    for node in decorators:
        if not (isinstance(node, ast.Call) and _mark_names([node]) == ["parametrize"] and len(node.args) > 1):
            continue
        values = node.args[1]
        if isinstance(values, ast.List | ast.Tuple):
            for item in values.elts:
                first = item.args[0] if isinstance(item, ast.Call) and item.args else item
                ids.append(str(first.value) if isinstance(first, ast.Constant) else "…")
        else:
            ids.append("…")
    return f"[{','.join(ids)}]" if ids else ""


def _module_markers(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
            return _mark_names(values)
    return []


def checks(suite: Path = SUITE_SOURCE) -> list[Check]:
    """Every check of the suite, in file and source order."""
    found = []
    for path in sorted(suite.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_marks = _module_markers(tree)
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
                continue
            marks = _mark_names(node.decorator_list) + module_marks
            shown = [m for m in MARKER_NAMES if m in marks] + (["informational"] if "informational" in marks else [])
            doc = (ast.get_docstring(node) or "").split("\n\n")[0]
            found.append(Check(path.stem, node.name, _param_ids(node.decorator_list), ", ".join(shown),
                               " ".join(doc.split())))  # fmt: skip
    return found


def check_table(found: Sequence[Check]) -> str:
    lines = ["| module | test | marker | what it checks, and when it fails |", "| --- | --- | --- | --- |"]
    previous = None
    for check in found:
        module = check.module if check.module != previous else ""
        previous = check.module
        doc = (check.doc or "(no docstring)").replace("|", "\\|")
        lines.append(f"| {module} | `{check.name}{check.params}` | {check.markers} | {doc} |")
    return "\n".join(lines) + "\n"


PAGES: Final[dict[str, Callable[[], str]]] = {
    "conformance/README.md": lambda: check_table(checks()),
    "docs/conformance-bounds.md": lambda: bounds_tables(bound_rows()),
}


def rendered(page: str, text: str, table: str) -> str:
    """``text`` with its generated block replaced by ``table``; ValueError without one block."""
    if len(BLOCK.findall(text)) != 1:
        raise ValueError(f"{page}: needs exactly one <!-- suite:start ... --> ... <!-- suite:end --> block")
    return BLOCK.sub(lambda m: m.group(1) + table + m.group(2), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.support.expectations.suite_docs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when a page differs from the code")
    args = parser.parse_args(argv)
    stale = []
    for page, table in PAGES.items():
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        wanted = rendered(page, text, table())
        if wanted != text:
            stale.append(page)
            if not args.check:
                path.write_text(wanted, encoding="utf-8")
    verb = "rewritten"
    if args.check:
        verb = "differ from the code; run `python -m conformance.support.expectations.suite_docs`"
    for page in stale:
        print(f"{page}: {verb}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
