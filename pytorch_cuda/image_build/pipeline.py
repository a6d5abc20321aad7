"""Execute a build plan: engine checks -> base -> BuildKit build -> in-image checks -> SBOM -> tags -> push."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from pytorch_cuda.engine.build_failure import HashMismatchError
from pytorch_cuda.engine.protocol import Engine, EngineBuild, ProgressSink
from pytorch_cuda.errors import ChecksFailedError, EngineError
from pytorch_cuda.image_build.build_plan import PIP_CA_SECRET, BuildPlan
from pytorch_cuda.locks.resolving import installed_lock
from pytorch_cuda.retry import Backoff, Sleeper
from pytorch_cuda.steps.base_image import BaseOutcome, ensure_base
from pytorch_cuda.steps.check_memo import recall, remember
from pytorch_cuda.steps.in_image_checks import CheckReport, run_cpu_conformance
from pytorch_cuda.steps.inductor_cache import host_cache
from pytorch_cuda.steps.move_tags import TagMove, move_tags
from pytorch_cuda.steps.publish import Publisher, PublishOutcome, publish
from pytorch_cuda.steps.remote_names import cache_ref
from pytorch_cuda.steps.sbom import SbomSummary, collect_sbom
from pytorch_cuda_contract.suite_digest import suite_tree_digest

MIN_FREE_DISK_BYTES = 12 * 1024**3


@dataclass(frozen=True)
class BuildOutcome:
    plan: BuildPlan
    image_id: str
    size_bytes: int
    base: BaseOutcome
    build_seconds: float
    cached_steps: int
    total_steps: int
    checks: CheckReport | None
    moves: tuple[TagMove, ...]
    total_seconds: float
    timings: dict[str, float] = field(default_factory=dict)
    sbom: SbomSummary | None = None
    published: PublishOutcome | None = None
    notes: tuple[str, ...] = ()  # what the build could not do and said so (e.g. no registry cache export)


@dataclass(frozen=True)
class PipelineHooks:
    log: Callable[[str], None]
    progress: ProgressSink
    index_probe: Callable[[], None]
    log_dir: Path
    backoff: Backoff = field(default_factory=Backoff)  # for registry pushes and lookups
    sleep: Sleeper = time.sleep


def check_disk(engine: Engine, needed: int = MIN_FREE_DISK_BYTES) -> None:
    free = engine.free_disk_bytes()
    if free is not None and free < needed:
        raise EngineError(
            cause=f"only {free / 1024**3:.1f} GiB is free under the Docker engine's data root; a CUDA image build "
            f"needs at least {needed / 1024**3:.0f} GiB (about 7.5 GB image plus the build cache)",
            fix="free space with `docker image prune -f` and `docker builder prune -f`, or move the data root",
        )


def execute(
    plan: BuildPlan, engine: Engine, hooks: PipelineHooks, build_args: Mapping[str, str] | None = None
) -> BuildOutcome:
    started = time.monotonic()
    timings: dict[str, float] = {}

    def timed(name: str, began: float) -> None:
        timings[name] = round(time.monotonic() - began, 1)

    hooks.log(f"engine: {engine.describe()}")
    check_disk(engine)
    began = time.monotonic()
    hooks.index_probe()
    timed("index_probe", began)

    began = time.monotonic()
    base = ensure_base(engine, plan.variant.base, log=hooks.log, source_date_epoch=plan.source_date_epoch)
    timed("base", began)
    hooks.log(f"base {base.ref}: {base.how} {base.detail}".rstrip())

    notes: list[str] = []
    cache_from, cache_to = _registry_cache(plan, engine, hooks, notes)
    request = replace(
        engine_request(plan, base.image_id, build_args or {}, hooks.log_dir), cache_from=cache_from, cache_to=cache_to
    )
    hooks.log_dir.mkdir(parents=True, exist_ok=True)
    hooks.log(f"building {plan.candidate} from {plan.dockerfile} (log: {request.log_path})")
    checks: CheckReport | None = None
    try:  # whatever happens from here on (a failure, Ctrl-C, a lost engine), the candidate tag goes
        result = engine.build(request, hooks.progress)
        timings["build"] = round(result.seconds, 1)
        if plan.run_checks:
            began = time.monotonic()
            checks = _checks(plan, engine, result.image_id, hooks)
            timed("checks", began)
            if not checks.passed:
                raise ChecksFailedError(
                    cause=f"the in-image checks failed in {plan.candidate} (exit {checks.exit_code}, "
                    f"{_counts(checks)}): {'; '.join(checks.failures[:3]) or checks.output_tail[-400:]}; "
                    "no tag was moved",
                    fix="fix what the failing checks name (matrix pins, template), re-render and build again; run "
                    "`docker run --rm --shm-size=1g <image> conformance -m cpu` on the image to see the details",
                )
        began = time.monotonic()
        sbom = collect_sbom(engine, plan.candidate, plan.variant.key, hooks.log_dir)
        timed("sbom", began)
        hooks.log(f"SBOM: {sbom.components} components ({sbom.python} Python, {sbom.deb} Debian) -> {sbom.path}")
        moves = move_tags(engine, result.image_id, plan.tags.all_refs)
    except HashMismatchError as mismatch:  # the engine knows no lock names: the locks room names the lock
        _drop_candidate_after_failure(engine, plan.candidate, hooks.log)
        raise mismatch.naming_locks(installed_lock) from mismatch
    except BaseException:
        _drop_candidate_after_failure(engine, plan.candidate, hooks.log)
        raise
    engine.untag(plan.candidate)
    published = None
    if plan.registry:
        began = time.monotonic()
        published = publish(
            result.image_id, plan.pushed_tags, plan.registry, Publisher(engine, hooks.log, hooks.backoff, hooks.sleep)
        )
        timed("push", began)
    return BuildOutcome(
        plan=plan,
        image_id=result.image_id,
        size_bytes=engine.image_size(plan.tags.full_ref),
        base=base,
        build_seconds=result.seconds,
        cached_steps=result.cached_steps,
        total_steps=result.total_steps,
        checks=checks,
        moves=tuple(moves),
        total_seconds=time.monotonic() - started,
        timings=timings,
        sbom=sbom,
        published=published,
        notes=tuple(notes),
    )


def engine_request(
    plan: BuildPlan, base_image_id: str, build_args: Mapping[str, str], log_dir: Path, *, again: bool = False
) -> EngineBuild:
    """What the engine builds for the plan; ``again``: a second build from scratch (--no-cache) under a tag of its
    own, to compare with the first (--verify-reproducible)."""
    suffix = "-again" if again else ""
    return EngineBuild(
        dockerfile=plan.dockerfile,
        context=plan.context,
        tag=plan.candidate + suffix,
        labels=plan.labels,
        build_args={"BASE_IMAGE_ID": base_image_id, **build_args},
        secrets={PIP_CA_SECRET: plan.ca_bundle} if plan.ca_bundle else {},
        log_path=log_dir / f"build-{plan.variant.key}{suffix}.log",
        no_cache=plan.no_cache or again,
        created_epoch=plan.created_epoch,
    )


def _drop_candidate_after_failure(engine: Engine, candidate: str, log: Callable[[str], None]) -> None:
    """Remove the candidate tag of a failed build without hiding why it failed: where the engine cannot answer
    (it restarted, or its connection is gone), say what may be left to remove by hand."""
    try:
        engine.untag(candidate)
    except Exception as exc:  # the build's own error is the one to report
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        log(
            f"note: could not remove the candidate tag {candidate} ({why}); once the engine answers, "
            f"`docker rmi {candidate}` removes it if it exists"
        )


def _registry_cache(
    plan: BuildPlan, engine: Engine, hooks: PipelineHooks, notes: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """With --registry, the build imports and exports its BuildKit cache there, where the client can."""
    if not plan.registry:
        return (), ()
    gap = engine.registry_cache_unsupported()
    if gap is not None:
        notes.append(f"registry build cache: not used: {gap}")
        hooks.log(f"note: {notes[-1]}")
        return (), ()
    ref = cache_ref(plan.tags, plan.registry, plan.variant.key)
    hooks.log(f"BuildKit cache: from and to {ref}")
    return (ref,), (ref,)


def _checks(plan: BuildPlan, engine: Engine, image_id: str, hooks: PipelineHooks) -> CheckReport:
    """Run the in-image checks, or reuse the passing result of this very image ID and suite."""
    memo_dir = hooks.log_dir / "checks"
    suite = suite_tree_digest(plan.context / "conformance")
    if not plan.recheck:
        remembered = recall(memo_dir, image_id, suite)
        if remembered is not None:
            hooks.log(f"in-image checks: reusing the passing result of {image_id[:19]} (same suite); --recheck reruns")
            return remembered
    cache = host_cache(plan.variant.torch_version)
    hooks.log(f"running `conformance -m cpu` inside {plan.candidate}, Inductor's cache in volume {cache.volume}")
    report = run_cpu_conformance(engine, plan.candidate, cache)
    remember(memo_dir, image_id, suite, report)
    return report


def _counts(checks: CheckReport) -> str:
    return ", ".join(f"{count} {outcome}" for outcome, count in sorted(checks.counts.items())) or "no results"
