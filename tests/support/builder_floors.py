"""The builder's floors (docs/how-it-works.md): each room of ``pytorch_cuda`` imports only rooms on lower floors.

Lowest first. A room on a floor imports neither a room above it nor another room of its own floor, so every floor
can be read, tested and changed knowing only the floors below it. tests/repo/test_builder_floors.py holds the tree
to it; ``python -m tests.support.builder_floors`` prints the floor of each room and any arrow that breaks it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Final

from tests.support import import_graph

FLOORS: Final[tuple[tuple[str, ...], ...]] = (
    # 0: the kernel every room may use
    ("__init__.py", "errors.py", "references.py", "retry.py", "stale_file.py", "tls.py"),
    # 1: data and the boundaries to the outside: matrix.yaml as types, the Docker engine, the host's network probes,
    # the OCI registry, the package index (bump, audit and the locks read it)
    ("matrix", "engine", "network", "oci", "package_index"),
    # 2: the hash locks (and the Debian package record committed beside them)
    ("locks",),
    # 3: images/ from templates/ (the flow's step after matrix.yaml; bump and audit --fix re-render through it), what
    # a build does with an image, what a release does with a digest, where results are stored
    ("render.py", "steps", "release", "run_store"),
    # 4: reading results: one run's precision report, the stored runs' noise, drift and regressions
    ("precision_report", "decay"),
    # 5: the writers of committed files and pages: pin bumps, the site, the CI job matrix
    ("bump", "site", "ci_jobs.py"),
    # 6: the flows that run the floors below: a build, an audit, everything `render` writes and checks; the
    # dependency dashboard that acts on bump's plans (and its pull-request hygiene)
    ("image_build", "audit", "render_outputs.py", "dependency_dashboard"),
    # 7: what a person sees of a build; the bake file and the --set overrides of a build; the bot's pull requests
    # (bump.yml's steps), which keep the dashboard's hygiene (labels, a person's close)
    ("console", "bake", "bot"),
    # 8: the command line: parses and prints
    ("cli",),
)


def floor_of(node: str, floors: Sequence[Sequence[str]] = FLOORS) -> int | None:
    """The floor of a builder node (``pytorch_cuda/locks``, ``pytorch_cuda/render.py``), None when it has none."""
    room = node.removeprefix("pytorch_cuda/")
    return next((index for index, rooms in enumerate(floors) if room in rooms), None)


def violations(graph: import_graph.Graph, floors: Sequence[Sequence[str]] = FLOORS) -> list[str]:
    """Every builder arrow that points up or sideways, and every builder room without a floor."""
    found = []
    builder = sorted(n for n in graph.nodes if n.split("/", maxsplit=1)[0] == "pytorch_cuda")
    found += [f"{node} has no floor: add it to tests/support/builder_floors.py" for node in builder
              if floor_of(node, floors) is None]  # fmt: skip
    for source, target in sorted(graph.edges()):
        if source not in builder or target not in builder:
            continue
        low, high = floor_of(target, floors), floor_of(source, floors)
        if low is not None and high is not None and low >= high:
            where = sorted({a.module for a in graph.arrows if (a.source, a.target) == (source, target)})
            side = "sideways" if low == high else "up"
            found.append(f"{source} (floor {high}) imports {target} (floor {low}), {side}: {', '.join(where)}")
    return found


def main() -> int:
    for index, rooms in enumerate(FLOORS):
        print(f"floor {index}: {', '.join(rooms)}")
    found = violations(import_graph.build())
    print(f"arrows against the floors: {len(found)}")
    for line in found:
        print(f"  {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
