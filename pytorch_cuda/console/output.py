"""Present results: a readable summary for people, JSON for machines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.tags import tag_set
from pytorch_cuda.matrix.variants import all_variants
from pytorch_cuda.stale_file import StaleFile

if TYPE_CHECKING:  # annotations only: `release verify` prints through here without loading the build pipeline
    from pytorch_cuda.image_build.pipeline import BuildOutcome
    from pytorch_cuda.locks.writing import LockChange


def matrix_rows(matrix: Matrix) -> list[dict[str, Any]]:
    rows = []
    for variant in all_variants(matrix):
        target = variant.target
        rows.append(
            {
                "variant": variant.key,
                "target": variant.target_name,
                "aliases": list(target.aliases),
                "flavour": variant.flavour_name,
                "torch": variant.torch_version,
                "cuda": target.cuda,
                "cudnn": target.cudnn,
                "nccl": target.nccl,
                "triton": target.triton,
                "python": variant.base.python,
                "base": variant.base.image,
                "index": str(target.index).rstrip("/"),
                "min_driver": target.min_driver,
                "tags": list(tag_set(matrix, variant).all_refs),
            }
        )
    return rows


def print_matrix(console: Console, matrix: Matrix) -> None:
    table = Table(title=f"{matrix.project.name} {matrix.project.series} targets", show_lines=False)
    for column in ("target", "aliases", "flavour", "torch", "CUDA", "cuDNN", "NCCL", "Triton", "Python", "index"):
        table.add_column(column)
    rows = matrix_rows(matrix)
    for row in rows:
        table.add_row(
            row["target"],
            ", ".join(row["aliases"]) or "-",
            row["flavour"],
            row["torch"],
            row["cuda"],
            row["cudnn"],
            row["nccl"],
            row["triton"],
            row["python"],
            row["index"],
        )
    console.print(table)
    for row in rows:
        console.print(f"{row['variant']}: " + ", ".join(row["tags"]), highlight=False, markup=False)


def outcome_dict(outcome: BuildOutcome) -> dict[str, Any]:
    checks = outcome.checks
    return {
        "variant": outcome.plan.variant.key,
        "image_id": outcome.image_id,
        "size_bytes": outcome.size_bytes,
        "tags": list(outcome.plan.tags.all_refs),
        "candidate": outcome.plan.candidate,  # the temporary tag the build landed on, removed once the tags moved
        "moved": [{"ref": m.ref, "previous": m.previous_id, "now": m.new_id} for m in outcome.moves],
        "base": {"ref": outcome.base.ref, "how": outcome.base.how, "id": outcome.base.image_id},
        "build_seconds": round(outcome.build_seconds, 1),
        "cached_steps": outcome.cached_steps,
        "total_steps": outcome.total_steps,
        "total_seconds": round(outcome.total_seconds, 1),
        "timings": outcome.timings,
        "labels": outcome.plan.labels,
        "checks": None
        if checks is None
        else {"passed": checks.passed, "exit_code": checks.exit_code, "counts": checks.counts, "reused": checks.reused},
        "sbom": outcome.sbom.as_dict() if outcome.sbom else None,
        "digests": outcome.published.digests if outcome.published else {},
        "push": None if outcome.published is None else [asdict(p) for p in outcome.published.pushed],
        "notes": list(outcome.notes),
    }


def print_outcome(console: Console, outcome: BuildOutcome) -> None:
    data = outcome_dict(outcome)
    console.print(
        f"[bold green]built[/bold green] {outcome.plan.tags.full_ref} ({outcome.image_id[:19]}), "
        f"{outcome.size_bytes / 1e9:.2f} GB, build {data['build_seconds']} s "
        f"({outcome.cached_steps}/{outcome.total_steps} steps cached), total {data['total_seconds']} s",
        highlight=False,
    )
    if outcome.checks is not None:
        counts = ", ".join(f"{n} {k}" for k, n in sorted(outcome.checks.counts.items()))
        how = " (reused: this image ID passed them before; --recheck reruns)" if outcome.checks.reused else ""
        console.print(f"in-image checks (conformance -m cpu): {counts}{how}", highlight=False, markup=False)
    for move in outcome.moves:
        note = "new" if move.previous_id is None else ("unchanged" if move.previous_id == move.new_id else "moved")
        console.print(f"  tag {move.ref} ({note})", highlight=False, markup=False)
    if outcome.sbom is not None:
        sbom = outcome.sbom
        console.print(
            f"SBOM (CycloneDX {sbom.spec_version}): {sbom.components} components, {sbom.python} Python and {sbom.deb} "
            f"Debian packages; {sbom.path} (in the image: {sbom.as_dict()['in_image']})",
            highlight=False,
            markup=False,
        )
    for pushed in outcome.published.pushed if outcome.published else ():
        console.print(
            f"  pushed {pushed.ref} {pushed.digest} ({pushed.uploaded} layers uploaded, {pushed.existing} already "
            f"there{', ' + str(pushed.attempts) + ' tries' if pushed.attempts > 1 else ''})",
            highlight=False,
            markup=False,
        )
    for note in outcome.notes:
        console.print(f"note: {note}", style="yellow", highlight=False, markup=False)


def print_lock_changes(console: Console, changes: Sequence[LockChange]) -> None:
    for change in changes:
        state = "created" if change.created else ("changed" if change.changes else "unchanged")
        console.print(f"{change.path}: {state}", highlight=False, markup=False)
        for line in change.changes:
            console.print(f"  {line}", highlight=False, markup=False)
        for line in change.held:
            console.print(f"  kept {line}: newer than min_release_age admits, never moved back", highlight=False,
                          markup=False)  # fmt: skip


def print_stale(console: Console, stale: list[StaleFile]) -> None:
    for item in stale:
        console.print(f"stale: {item.path}: {item.reason}", highlight=False, markup=False)
        if item.diff:
            console.print(item.diff, highlight=False, markup=False)


def dumps(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=False)
