"""Bounds are named and checked (issue 52 item 4). The bounds-table test failed when a named constant in the table
changed, and passed when an inline literal in an assert changed, a constant outside the table changed, or an assert
stopped using its constant. Here: no gated comparison holds a literal, changing any named bound a gate uses changes
docs/conformance-bounds.md, every constant the table shows is used by the suite, and a check's docstring names only
bounds that exist."""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformance.support import SUITE_SOURCE
from conformance.support.expectations import bound_table, bounds, gate_lint, ratios
from pytorch_cuda_contract import shared_memory

BOUND_OWNERS: tuple[ModuleType, ...] = (bounds, ratios, shared_memory)
CAPABILITY_SUFFIX = "_FROM"  # EVERY_DTYPE_FROM, FLASH_ATTENTION_FROM: where a feature starts, not a bound


def _changed(value: Any) -> Any:
    """The same shape of value, every number in it moved."""
    if isinstance(value, bool) or not isinstance(value, int | float | dict | tuple | list):
        return value
    if isinstance(value, dict):
        return {key: _changed(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return tuple(_changed(item) for item in value)
    return value * 2 if isinstance(value, int) else value * 1.37


def _table(read: Any = bound_table.constants) -> str:
    return bound_table.bounds_tables(bound_table.bound_rows(read))


def _numeric_constants(module: ModuleType) -> list[str]:
    """The module's upper-case constants written as numbers (or dicts and tuples of them), and their aliases."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    names: list[str] = []
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if not (isinstance(target, ast.Name) and target.id.isupper() and isinstance(value, ast.expr)):
            continue
        if isinstance(value, ast.Name):
            if value.id in names:  # DATASHEET_CEILING = FP32_PEAK_MARGIN
                names.append(target.id)
            continue
        try:
            literal = ast.literal_eval(value)
        except ValueError:
            continue
        if _changed(literal) != literal:
            names.append(target.id)
    return names


BOUND_MODULE_NAMES = [(module, name) for module in (bounds, ratios) for name in _numeric_constants(module)]
GATE_NAMES = sorted(
    (module, name)
    for module, names in gate_lint.gate_names().items()
    for name in names
    if not name.endswith(CAPABILITY_SUFFIX)
)


def test_no_gated_comparison_holds_a_literal() -> None:
    assert gate_lint.literal_gates() == [], "\n".join(map(str, gate_lint.literal_gates()))


def test_a_literal_in_a_gated_comparison_is_found(tmp_path: Path) -> None:
    (tmp_path / "support/expectations").mkdir(parents=True)
    for module in gate_lint.BOUND_MODULES:
        (tmp_path / module).write_text("LIMIT = 0.5\n")
    (tmp_path / "test_x.py").write_text(
        "BOUND = 1e-3\n\n\ndef test_a(error, n, gate, record_metric):\n"
        "    assert error < BOUND\n    assert n == 2\n    assert n > 0\n"
        "    record_metric('m', error, 'rel', bound=MIB / 2**20)\n"
        "    assert error < 1e-3\n    record_metric('m', error, 'rel', bound=2e-3)\n    gate = Gate(0.5, None, '')\n"
    )
    found = [(f.line, f.what.split(" in ")[0]) for f in gate_lint.literal_gates(tmp_path)]
    assert found == [(9, "the literal 0.001"), (10, "the literal 0.002"), (11, "the literal 0.5")]


@pytest.mark.parametrize(("module", "name"), BOUND_MODULE_NAMES, ids=[n for _, n in BOUND_MODULE_NAMES])
def test_every_bound_of_bounds_and_ratios_is_in_the_table(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str
) -> None:
    before = _table()
    monkeypatch.setattr(module, name, _changed(getattr(module, name)))
    assert _table() != before, f"{module.__name__}.{name} changed and docs/conformance-bounds.md's table did not"


@pytest.mark.parametrize(("module", "name"), GATE_NAMES, ids=[f"{m}.{n}" for m, n in GATE_NAMES])
def test_every_named_bound_a_gate_uses_is_in_the_table(monkeypatch: pytest.MonkeyPatch, module: str, name: str) -> None:
    before = _table()
    if name in bound_table.constants(module):

        def read(read_module: str) -> dict[str, Any]:
            found = bound_table.constants(read_module)
            if read_module == module:
                found[name] = _changed(found[name])
            return found

        assert _table(read) != before, f"{module}.{name} changed and the bounds table did not"
        return
    owner = next((m for m in BOUND_OWNERS if hasattr(m, name)), None)
    assert owner is not None, f"{module} gates on {name}, which neither it nor {BOUND_OWNERS} defines"
    monkeypatch.setattr(owner, name, _changed(getattr(owner, name)))
    assert _table() != before, f"{owner.__name__}.{name} (a gate of {module}) changed and the bounds table did not"


class _Reads(dict[str, Any]):
    """A module's constants that remembers which ones the table read."""

    def __init__(self, module: str, seen: set[tuple[str, str]]) -> None:
        super().__init__(bound_table.constants(module))
        self.module, self.seen = module, seen

    def __getitem__(self, key: str) -> Any:
        self.seen.add((self.module, key))
        return super().__getitem__(key)


def _used_outside_its_definition(module: str, name: str, suite: Path = SUITE_SOURCE) -> bool:
    tree = ast.parse((suite / f"{module}.py").read_text(encoding="utf-8"))
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(tree))


def test_every_constant_the_table_shows_is_used_by_its_module() -> None:
    """An assert that stops using its constant leaves the table showing a bound nothing judges."""
    seen: set[tuple[str, str]] = set()
    bound_table.bound_rows(lambda module: _Reads(module, seen))
    assert seen, "the table read no test module's constants"
    unused = sorted(f"{m}.{n}" for m, n in seen if not _used_outside_its_definition(m, n))
    assert not unused, f"the bounds table shows constants nothing uses: {unused}"


def test_a_constant_no_assert_uses_is_found(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("BOUND = 1e-3\nUSED = 2e-3\n\n\ndef test_a(error):\n    assert error < USED\n")
    assert not _used_outside_its_definition("test_x", "BOUND", tmp_path)
    assert _used_outside_its_definition("test_x", "USED", tmp_path)


def test_every_docstring_gate_is_a_bound_the_check_reaches() -> None:
    assert gate_lint.docstring_gates() == [], "\n".join(map(str, gate_lint.docstring_gates()))


def test_a_false_docstring_gate_is_found(tmp_path: Path) -> None:
    (tmp_path / "support/expectations").mkdir(parents=True)
    for module in gate_lint.BOUND_MODULES:
        (tmp_path / module).write_text("")
    (tmp_path / "test_x.py").write_text(
        "FLOOR = 0.25\n\n\ndef _gate():\n    return FLOOR\n\n\n"
        'def test_a():\n    """Fails when below 25 % of the peak, or more than 2× slower."""\n    _gate()\n\n\n'
        'def test_b():\n    """Fails when below `FLOOR` or `NO_SUCH_BOUND`."""\n'
    )
    found = [f.what for f in gate_lint.docstring_gates(tmp_path)]
    assert found == [
        "test_a: 'more than 2×' is no bound this check reaches",
        "test_b: `NO_SUCH_BOUND` names no constant",
    ]
