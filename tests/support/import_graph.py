"""The product's import graph at folder level: its arrows, the arrows on cycles, the two-way folder imports.

``python -m tests.support.import_graph [ROOT] [--arrows]`` prints the counts (and with --arrows every arrow); the
import-rules test holds the counts at zero. Standard library only, read from the source with ``ast`` (nothing
is imported, so the suite's torch and the builder's libraries need not be installed).

A node is a sub-package's folder (``pytorch_cuda/locks``, ``conformance/support/probes``), or a module that sits
loose at a package's top (``pytorch_cuda/render.py``): a package's top holds modules of every floor, its
sub-packages are the rooms. An arrow A -> B is an import, anywhere in a module of A (a lazy import inside a
function counts too), of a module of B. A two-way folder import is a pair of nodes that import each other; an
upward arrow is one on a cycle: it points at a node that already depends on the importer, so no order of floors
puts every arrow downward.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
PRODUCT: Final = (
    "pytorch_cuda", "pytorch_cuda_contract", "pytorch_cuda_entry", "pytorch_cuda_sbom", "conformance",
    "precision_check", "fault_coverage",
)  # fmt: skip
BUILDER: Final = ("pytorch_cuda",)  # pytorch_cuda and its sub-packages, not the other pytorch_cuda_* packages


@dataclass(frozen=True)
class Arrow:
    source: str  # node
    target: str  # node
    module: str  # the importing module's file, relative to the root
    name: str  # the imported name


@dataclass(frozen=True)
class Graph:
    nodes: frozenset[str]
    arrows: tuple[Arrow, ...]

    def edges(self) -> set[tuple[str, str]]:
        return {(a.source, a.target) for a in self.arrows}

    def two_way(self) -> list[tuple[str, str]]:
        """Pairs of nodes that import each other, each pair once (sorted)."""
        edges = self.edges()
        return sorted((a, b) for a, b in edges if a < b and (b, a) in edges)

    def upward(self) -> list[tuple[str, str]]:
        """Node arrows that sit on a cycle: their target already reaches their source."""
        edges = self.edges()
        return sorted((a, b) for a, b in edges if a in _reachable(edges, b))

    def builder_arrows_into(self, packages: Sequence[str]) -> list[Arrow]:
        """Arrows from the builder (pytorch_cuda and its sub-packages) into the given packages."""
        return [a for a in self.arrows if _package(a.source) in BUILDER and _package(a.target) in packages]


def _package(node: str) -> str:
    return node.split("/", maxsplit=1)[0]


def _reachable(edges: set[tuple[str, str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        for a, b in edges:
            if a == node and b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def imported_names(path: Path) -> Iterator[str]:
    """Every absolute module an import statement names (``from a import b`` names ``a`` and ``a.b``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _node_of_file(relative: Path) -> str:
    """The node a source file belongs to: its folder, or itself when it sits at its package's top."""
    parent = relative.parent
    return str(relative) if len(parent.parts) == 1 else str(parent)


def _file_of_module(root: Path, name: str) -> Path | None:
    """The file (relative) that defines module ``name``, or None for a name that is not a first-party module."""
    parts = name.split(".")
    if parts[0] not in PRODUCT:
        return None
    base = Path(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if (root / candidate).is_file():
            return candidate
    return None


def build(root: Path = ROOT) -> Graph:
    nodes: set[str] = set()
    arrows: set[Arrow] = set()
    for package in PRODUCT:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            if "__pycache__" in relative.parts:
                continue
            source = _node_of_file(relative)
            nodes.add(source)
            for name in imported_names(path):
                target_file = _file_of_module(root, name)
                if target_file is None:
                    continue
                target = _node_of_file(target_file)
                if target != source and not _is_parent_init(target_file, relative):
                    arrows.add(Arrow(source, target, str(relative), name))
    return Graph(frozenset(nodes), tuple(sorted(arrows, key=lambda a: (a.source, a.target, a.module, a.name))))


def _is_parent_init(target: Path, importer: Path) -> bool:
    """``from a.b import c`` also names the package ``a.b`` (its __init__.py): an import of a sibling, not of the
    package that holds it, when the importer sits inside that package."""
    return target.name == "__init__.py" and importer.is_relative_to(target.parent)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.import_graph", description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", type=Path, default=ROOT, help="a checkout (default: this one)")
    parser.add_argument("--arrows", action="store_true", help="print every node arrow")
    args = parser.parse_args(argv)
    graph = build(args.root)
    edges = graph.edges()
    if args.arrows:
        for source, target in sorted(edges):
            print(f"{source} -> {target}")
    print(f"nodes: {len(graph.nodes)}, node arrows: {len(edges)}")
    upward = graph.upward()
    print(f"upward arrows (on a cycle): {len(upward)}")
    for source, target in upward:
        where = sorted({a.module for a in graph.arrows if (a.source, a.target) == (source, target)})
        print(f"  {source} -> {target}  ({', '.join(where)})")
    two_way = graph.two_way()
    print(f"two-way folder imports: {len(two_way)}")
    for a, b in two_way:
        print(f"  {a} <-> {b}")
    into = graph.builder_arrows_into(("conformance", "precision_check"))
    print(f"builder -> conformance/precision_check imports: {len(into)}")
    for arrow in into:
        print(f"  {arrow.module}: {arrow.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
