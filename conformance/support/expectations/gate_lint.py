"""Bounds are named and checked (issue 52), read from the suite's code with ``ast`` (standard library only; no test
module is imported: they import torch).

- ``literal_gates``: a number written into a gated comparison (an ordering ``assert`` of a test module, a
  ``bound=`` given to ``record_metric``, or the limits of a ``Gate``) instead of a named bound. 0 and 1 are counts
  and identities, not bounds.
- ``gate_names``: the upper-case names those comparisons use; tests/repo/test_gate_lint.py changes each one and
  requires docs/conformance-bounds.md's table to change with it.
- ``docstring_gates``: a check's docstring (the line conformance/README.md shows) that puts a number after a gate
  word ("below 25 %", "more than 2×") which no bound of the suite has, or names a `CONSTANT` that does not exist.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.support import SUITE_SOURCE

BOUND_MODULES: Final = ("support/expectations/bounds.py", "support/expectations/ratios.py")
ORDERING: Final = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
COUNTS: Final = (0, 1)
GATE_WORDS: Final = r"(?:below|above|under|over|less than|more than|at least|at most|exceeds?|beyond)"
DOC_GATE: Final = re.compile(GATE_WORDS + r"\s+~?(\d+(?:\.\d+)?(?:e-?\d+)?)\s*(%|×|x\b)?")
DOC_NAME: Final = re.compile(r"`([A-Z][A-Z0-9_]{2,})`")


@dataclass(frozen=True)
class GateFinding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _test_modules(suite: Path) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(suite.glob("test_*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def _numbers(node: ast.AST) -> Iterator[ast.Constant]:
    """The numbers in ``node`` other than counts, and other than a unit's power (``2**20``: MiB)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return
    if isinstance(node, ast.Constant) and _is_number(node) and node.value not in COUNTS:
        yield node
    for child in ast.iter_child_nodes(node):
        yield from _numbers(child)


def _gated_operands(tree: ast.Module) -> Iterator[ast.expr]:
    """The operands of every ordering comparison in an assert, every ``bound=`` and every ``Gate(...)`` limit."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
                if any(isinstance(op, ORDERING) for op in compare.ops):
                    yield compare.left
                    yield from compare.comparators
        elif isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name == "Gate":
                yield from node.args[:2]
            yield from (k.value for k in node.keywords if k.arg in ("bound", "lower", "upper"))


def _gate_inputs(tree: ast.Module) -> Iterator[ast.expr]:
    """What feeds a gate: the gated operands, every ordering comparison (a ``bad = {... if not e < BOUND}``), and the
    arguments of a ``*_gate(...)`` or ``tighter(...)`` call."""
    yield from _gated_operands(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, ORDERING) for op in node.ops):
            yield node
        elif isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name.endswith("_gate") or name == "tighter":
                yield from node.args


def literal_gates(suite: Path = SUITE_SOURCE) -> list[GateFinding]:
    found = []
    paths = [*(p for p, _ in _test_modules(suite)), *(suite / m for m in BOUND_MODULES)]
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for operand in _gated_operands(tree):
            found += [GateFinding(path.name, number.lineno, f"the literal {number.value!r} in a gated comparison: name "
                              "it (bounds.py, or a constant of the module) so the bounds table shows it")
                      for number in _numbers(operand)]  # fmt: skip
    return found


def gate_names(suite: Path = SUITE_SOURCE) -> dict[str, set[str]]:
    """Per test module (its stem), the upper-case names its gated comparisons use."""
    names: dict[str, set[str]] = {}
    for path, tree in _test_modules(suite):
        used = set().union(*(_referenced(operand) for operand in _gate_inputs(tree)))
        names[path.stem] = {name for name in used if name.isupper() and len(name) > 2}
    return names


def _suite_files(suite: Path) -> list[Path]:
    return sorted(suite.rglob("*.py"))


def _is_constant(node: ast.stmt) -> tuple[str, ast.expr] | None:
    target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
    value = getattr(node, "value", None)
    if isinstance(target, ast.Name) and target.id.isupper() and isinstance(value, ast.expr):
        return target.id, value
    return None


def _referenced(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


@dataclass(frozen=True)
class SuiteNames:
    """Every module-level constant of the suite with the numbers it holds (a name it aliases followed), and the names
    each module-level function refers to."""

    constants: dict[str, set[float]]
    functions: dict[str, set[str]]

    def reachable(self, names: set[str]) -> set[str]:
        """``names`` and every name the functions among them refer to, transitively."""
        seen, todo = set(names), list(names)
        while todo:
            for name in self.functions.get(todo.pop(), set()) - seen:
                seen.add(name)
                todo.append(name)
        return seen

    def values(self, names: set[str]) -> set[float]:
        found: set[float] = set()
        for name in self.reachable(names):
            found |= self.constants.get(name, set())
        return found


def suite_names(suite: Path = SUITE_SOURCE) -> SuiteNames:
    constants: dict[str, set[float]] = {}
    aliases: dict[str, set[str]] = {}
    functions: dict[str, set[str]] = {}
    for path in _suite_files(suite):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            constant = _is_constant(node)
            if constant is not None:
                name, value = constant
                constants.setdefault(name, set()).update(_numbers_all(value))
                aliases.setdefault(name, set()).update(n for n in _referenced(value) if n.isupper())
            elif isinstance(node, ast.FunctionDef):
                functions.setdefault(node.name, set()).update(_referenced(node))
    for name, targets in aliases.items():  # DATASHEET_CEILING = FP32_PEAK_MARGIN
        for target in targets:
            constants[name] |= constants.get(target, set())
    return SuiteNames(constants, functions)


def _numbers_all(node: ast.AST) -> Iterator[float]:
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, int | float) and _is_number(child):
            yield float(child.value)


def _is_bound(number: float, percent: bool, values: set[float]) -> bool:
    wanted = {number, number / 100} if percent else {number}
    return any(abs(v - w) <= 1e-9 * max(1.0, abs(w)) for v in values for w in wanted)


def docstring_gates(suite: Path = SUITE_SOURCE) -> list[GateFinding]:
    """A number after a gate word in a check's docstring must be held by a constant that the check reaches (through
    the functions it calls); a backticked `NAME` must be a constant of the suite."""
    names = suite_names(suite)
    found = []
    for path, tree in _test_modules(suite):
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
                continue
            doc = " ".join((ast.get_docstring(node) or "").split("\n\n")[0].split())
            values = names.values(_referenced(node) - {node.name})
            for match in DOC_GATE.finditer(doc):
                if not _is_bound(float(match.group(1)), match.group(2) == "%", values):
                    found.append(GateFinding(path.name, node.lineno, f"{node.name}: {match.group(0).strip()!r} is no "
                                         "bound this check reaches"))  # fmt: skip
            for name in DOC_NAME.findall(doc):
                if name not in names.constants:
                    found.append(GateFinding(path.name, node.lineno, f"{node.name}: `{name}` names no constant"))
    return found
