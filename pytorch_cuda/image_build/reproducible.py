"""--verify-reproducible: build each variant a second time from scratch and compare the image IDs.

The second build runs with --no-cache (every step again; the download caches, which hold only hash-checked
wheels and .debs, stay) on the same base, under a tag of its own that is removed afterwards; no release tag
moves. Its build cache records (a second copy of every layer, about 7.5 GB for a CUDA image) are removed too,
and only its own: the first build's stay, so the next build is still a cached one. Equal IDs mean equal
configs and equal layers, byte for byte. When they differ, the engine names the layers and their first
differing files (diffoci style).

--verify-reproducible-apart checks the same recipe without building any layer the engine already holds: each
variant is built twice from scratch at another file time (SOURCE_DATE_EPOCH a second after matrix.yaml's, as a
build argument; the same base), the first of the pair removed (its tag and its build cache records) before the
second starts, and the two image IDs compared. Docker 20.10 (BuildKit 0.8) keeps the directory of a rebuilt
layer that equals one it holds (7.5 GB per CUDA image, freed by no prune); built apart, no layer of the pair
equals one the engine holds when it is made, so nothing is left behind (tests/support/layer_leak.py measures it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from pytorch_cuda.engine.protocol import BuildResult, Engine, EngineBuild
from pytorch_cuda.errors import ChecksFailedError
from pytorch_cuda.image_build.lineage import PARENT_BUILD_ARG
from pytorch_cuda.image_build.pipeline import BuildOutcome, PipelineHooks, engine_request

# --verify-reproducible-apart's file time: a second after matrix.yaml's, so that the pair's first layer differs from
# the release's (and so every layer above it), while the base's files, at matrix.yaml's time, are not newer and stay
# as they are (an earlier time would have clamp-mtimes touch, and so copy up, every file of the base)
APART_SHIFT_SECONDS = 1


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
    apart: bool = False  # built as a pair at another file time, the first removed before the second

    @property
    def reproducible(self) -> bool:
        return self.first == self.second

    def as_dict(self) -> dict[str, object]:
        return {
            "variant": self.variant,
            "mode": "apart" if self.apart else "beside",
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


def build_apart_and_compare(
    outcomes: list[BuildOutcome], engine: Engine, hooks: PipelineHooks
) -> list[Reproducibility]:
    """Each built variant (parents first) built twice from scratch at another file time, the first of the pair
    removed before the second; a child's pair is built FROM its parent's second image, removed at the end."""
    checked: list[Reproducibility] = []
    kept: list[str] = []  # each variant's second image, the next variant's parent, until all are checked
    try:
        for outcome in outcomes:
            plan = outcome.plan
            if plan.source_date_epoch is None:
                raise ChecksFailedError(
                    cause=f"{plan.variant.key} has no file time (matrix.yaml's project.source_date_epoch)",
                    fix="set project.source_date_epoch in matrix.yaml and re-render",
                )
            epoch = plan.source_date_epoch + APART_SHIFT_SECONDS
            build_args = {"SOURCE_DATE_EPOCH": str(epoch), **({PARENT_BUILD_ARG: kept[-1]} if kept else {})}
            again = engine_request(plan, outcome.base.image_id, build_args, hooks.log_dir, again=True)
            pair = [
                replace(
                    again,
                    tag=f"{plan.candidate}-apart-{n}",
                    log_path=hooks.log_dir / f"build-{plan.variant.key}-apart-{n}.log",
                )
                for n in (1, 2)
            ]
            hooks.log(f"--verify-reproducible-apart: building {plan.variant.key} twice from scratch at {epoch}")
            first, _, removed_first, reclaimed_first, first_layers = _build_and_drop(
                engine, pair[0], plan.dockerfile, hooks
            )
            began = time.monotonic()
            kept.append(pair[1].tag)
            second, result, removed, reclaimed, second_layers = _build_and_drop(
                engine, pair[1], plan.dockerfile, hooks, keep=True
            )
            checked.append(
                Reproducibility(
                    plan.variant.key,
                    epoch,
                    plan.created_epoch,
                    first,
                    second,
                    time.monotonic() - began,
                    result.cached_steps,
                    result.total_steps,
                    () if first == second else _layer_differences(first_layers, second_layers, first),
                    removed_first + removed,
                    reclaimed_first + reclaimed,
                    apart=True,
                )
            )
            hooks.log(
                f"{plan.variant.key} at {epoch}: "
                + (
                    "reproducible, one image ID " + second
                    if first == second
                    else f"NOT reproducible: {first} then {second}"
                )
            )
    finally:
        for tag in reversed(kept):
            engine.untag(tag)
    return checked


def _layer_differences(first: list[str], second: list[str], first_id: str) -> tuple[str, ...]:
    """The layers (by position, base first) whose digests differ; the first image is gone, so its files cannot be
    compared here."""
    named = [
        f"layer {n + 1} of {len(second)}: {a[:19]} != {b[:19]}"
        for n, (a, b) in enumerate(zip(first, second, strict=False))
        if a != b
    ]
    if len(first) != len(second):
        named.append(f"{len(first)} layers != {len(second)}")
    return (*named, f"`docker history` names them; --verify-reproducible names their files ({first_id[:19]} removed)")


def _build_and_drop(
    engine: Engine, request: EngineBuild, dockerfile: Path, hooks: PipelineHooks, *, keep: bool = False
) -> tuple[str, BuildResult, int, int, list[str]]:
    """One build from scratch; its build cache records are removed after it, and its image too unless kept."""
    cache_before = engine.build_cache_ids()
    layers: list[str] = []
    try:
        result = engine.build(request, hooks.progress)
        layers = engine.layer_digests(result.image_id)
    finally:
        if not keep:
            engine.untag(request.tag)
        removed, reclaimed = engine.drop_build_cache(cache_before, dockerfile)
        hooks.log(f"--verify-reproducible-apart: {request.tag}: removed {removed} build cache records")
    return result.image_id, result, removed, reclaimed, layers


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
