"""The Debian side of a bump plan: each base's committed Debian package record (locks/debian_record.py) checked
against the archive of its three suites, the updates into the plan, and a note for a base with no record or
nothing newer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pytorch_cuda.bump.bump_plan import BumpPlan
from pytorch_cuda.bump.debian_archive import DebianUpdate, check_bases
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.debian_suites import base_suites
from pytorch_cuda.package_index.simple_index import fetch_bytes


def with_debian(  # noqa: PLR0917 - the plan's parts and where it logs
    plan: BumpPlan, notes: list[str], matrix: Matrix, root: Path, ca: Path | None, log: Callable[[str], None]
) -> BumpPlan:
    """The plan with each base's recorded Debian packages checked against the archive (or a note: no record)."""
    updates: list[DebianUpdate] = []
    # an archive that does not answer stays exit 2: no Debian verdict without it (docs/bump.md)
    for base in check_bases(matrix, root, lambda url: fetch_bytes(url, ca)[1], log):
        if base.updates is None:
            notes.append(
                f"base {base.name}: no Debian package record ({base.where}): write one with `build.py bump "
                "--record-debian IMAGE` from a built image; the Debian archive is not checked"
            )
        elif not base.updates:
            names = ", ".join(suite.name for suite in base_suites(base.bootstrap))
            notes.append(
                f"base {base.name}: the {base.packages} Debian packages of {base.where} are the newest in {names}"
            )
        updates += base.updates or ()
    return replace(plan, notes=tuple(notes), debian=tuple(updates))
