"""--verify-reproducible: build each variant a second time from scratch and compare the image IDs.

The second build runs with --no-cache (every step again; the download caches, which hold only hash-checked
wheels and .debs, stay) on the same base, under a tag of its own that is removed afterwards; no release tag
moves. Its build cache records (a second copy of every layer, about 7.5 GB for a CUDA image) are removed too,
and only its own: the first build's stay, so the next build is still a cached one. Equal IDs mean equal
configs and equal layers, byte for byte. When they differ, the engine names the layers and their first
differing files (diffoci style).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pytorch_cuda.engine.protocol import Engine
from pytorch_cuda.errors import ChecksFailedError
from pytorch_cuda.image_build.lineage import PARENT_BUILD_ARG
from pytorch_cuda.image_build.pipeline import BuildOutcome, PipelineHooks, engine_request


@dataclass(frozen=True)
class Reproducibility:
    variant: str
    source_date_epoch: int | None  # the files' time (matrix.yaml)
    created_epoch: int | None  # the config's (the commit's)
    first: str
    second: str
    seconds: float
    cached_steps: int  # of the second build: with --no-cache, only the base's FROM and BuildKit's internal steps
    total_steps: int
    differences: tuple[str, ...] = ()
    cache_records_removed: int = 0  # the second build's own build cache records, removed after it
    cache_bytes_reclaimed: int = 0

    @property
    def reproducible(self) -> bool:
        return self.first == self.second

    def as_dict(self) -> dict[str, object]:
        return {
            "variant": self.variant,
            "source_date_epoch": self.source_date_epoch,
            "created_epoch": self.created_epoch,
            "reproducible": self.reproducible,
            "first": self.first,
            "second": self.second,
            "second_build_seconds": round(self.seconds, 1),
            "second_build_cached_steps": f"{self.cached_steps}/{self.total_steps}",
            "differences": list(self.differences),
            "second_build_cache_removed": {"records": self.cache_records_removed, "bytes": self.cache_bytes_reclaimed},
        }


def rebuild_and_compare(outcomes: list[BuildOutcome], engine: Engine, hooks: PipelineHooks) -> list[Reproducibility]:
    """Each built variant (parents first) built again from scratch and compared with its first build."""
    checked = []
    for position, outcome in enumerate(outcomes):
        plan = outcome.plan
        build_args = {PARENT_BUILD_ARG: outcomes[position - 1].plan.tags.full_ref} if position else {}
        request = engine_request(plan, outcome.base.image_id, build_args, hooks.log_dir, again=True)
        hooks.log(f"--verify-reproducible: building {plan.variant.key} again with --no-cache as {request.tag}")
        cache_before = engine.build_cache_ids()
        began = time.monotonic()
        try:
            result = engine.build(request, hooks.progress)
            second = result.image_id
            differences = () if second == outcome.image_id else engine.image_differences(outcome.image_id, second)
        finally:
            engine.untag(request.tag)  # and the second image with it, where it is another one
            removed, reclaimed = engine.drop_build_cache(cache_before, plan.dockerfile)
            hooks.log(
                f"--verify-reproducible: removed the second build's {removed} build cache records "
                f"({reclaimed / 1e9:.2f} GB reclaimed); the first build's stay"
            )
        checked.append(
            Reproducibility(
                plan.variant.key,
                plan.source_date_epoch,
                plan.created_epoch,
                outcome.image_id,
                second,
                time.monotonic() - began,
                result.cached_steps,
                result.total_steps,
                tuple(differences),
                removed,
                reclaimed,
            )
        )
        hooks.log(
            f"{plan.variant.key}: "
            + (
                "reproducible, one image ID " + second
                if second == outcome.image_id
                else f"NOT reproducible: {outcome.image_id} then {second}"
            )
        )
    return checked


def require_reproducible(checked: list[Reproducibility]) -> None:
    """Refuse (exit 1) when a second build gave another image, naming what differs."""
    failed = [check for check in checked if not check.reproducible]
    if failed:
        detail = "; ".join(
            f"{c.variant}: {c.first[:19]} != {c.second[:19]}: " + " | ".join(c.differences[:6]) for c in failed
        )
        raise ChecksFailedError(
            cause=f"two builds of one commit gave different images ({detail})",
            fix="make the named files the same on every build (drop run-dependent files, end the RUN with "
            "clamp-mtimes, declare ARG SOURCE_DATE_EPOCH with matrix.yaml's value in the stage); docs/release.md "
            "has the rules",
        )
