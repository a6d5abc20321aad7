"""Pushing to a registry: the full tag first, the aliases last, retries with backoff, all or none."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pytorch_cuda.engine.protocol import RegistryError, TransientRegistryError
from pytorch_cuda.image_build.pipeline import PipelineHooks, execute
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.tags import TagSet, candidate_by_digest
from pytorch_cuda.matrix.variants import select_variant
from pytorch_cuda.retry import Backoff, GaveUpError, TransientError, with_retries
from pytorch_cuda.steps.publish import Publisher, PushError, publish
from tests.support.fake_engine import FakeEngine, registry_digest_of
from tests.support.plans import cu12_plan

REGISTRY = "127.0.0.1:5000/ci"
TAGS = TagSet("pytorch-cuda", "2.9.1-full", ("2.9-cu128-runtime", "v2.9-runtime", "v2.9"))
REMOTE = f"{REGISTRY}/pytorch-cuda"
FULL, A1, A2, A3 = (f"{REMOTE}:{t}" for t in ("2.9.1-full", "2.9-cu128-runtime", "v2.9-runtime", "v2.9"))
NEW, OLD = "sha256:new", "sha256:old"


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _publisher(engine: FakeEngine, sleeps: Sleeps | None = None, logged: list[str] | None = None) -> Publisher:
    return Publisher(engine, (logged if logged is not None else []).append, Backoff(attempts=3), sleeps or Sleeps())


def _pushes(engine: FakeEngine) -> list[str]:
    return [call.removeprefix("push ") for call in engine.calls if call.startswith("push ")]


def test_full_tag_first_aliases_last_and_every_digest() -> None:
    engine = FakeEngine(images={"local": NEW})
    outcome = publish(NEW, TAGS, REGISTRY, _publisher(engine))
    assert _pushes(engine) == [FULL, A1, A2, A3]
    lookups = [i for i, call in enumerate(engine.calls) if call.startswith("lookup ")]
    assert max(lookups) < engine.calls.index(f"push {FULL}")  # the registry is asked before anything moves
    digest = registry_digest_of(NEW)
    assert outcome.digests == dict.fromkeys((FULL, A1, A2, A3), digest)
    full, *aliases = outcome.pushed
    assert (full.uploaded, full.existing, full.previous) == (3, 0, None)
    assert all((a.uploaded, a.existing) == (0, 3) for a in aliases)  # the aliases upload nothing
    assert engine.registry == dict.fromkeys((FULL, A1, A2, A3), digest)


def test_second_push_of_the_same_image_uploads_no_layer() -> None:
    engine = FakeEngine(images={"local": NEW})
    publish(NEW, TAGS, REGISTRY, _publisher(engine))
    again = publish(NEW, TAGS, REGISTRY, _publisher(engine))
    assert all(p.uploaded == 0 and p.existing == 3 for p in again.pushed)
    assert all(p.previous == p.digest for p in again.pushed)


def test_transient_errors_are_retried_with_growing_waits() -> None:
    engine = FakeEngine(images={"local": NEW})
    engine.push_errors[FULL] = [TransientRegistryError("503 Service Unavailable"), TransientRegistryError("EOF")]
    sleeps, logged = Sleeps(), list[str]()
    outcome = publish(NEW, TAGS, REGISTRY, _publisher(engine, sleeps, logged))
    assert _pushes(engine) == [FULL, FULL, FULL, A1, A2, A3]
    assert sleeps.waits == [2.0, 6.0]
    assert outcome.pushed[0].attempts == 3
    assert any("try 2 of 3 in 2 s" in line for line in logged)


def test_backoff_caps_its_waits() -> None:
    assert Backoff(attempts=6, first_s=2, factor=3, max_s=30).delays() == (2, 6, 18, 30, 30)
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        raise TransientError("timeout")

    sleeps = Sleeps()
    with pytest.raises(GaveUpError) as info:
        with_retries(flaky, backoff=Backoff(attempts=4, first_s=1, factor=2), sleep=sleeps)
    assert (len(calls), sleeps.waits, info.value.attempts) == (4, [1, 2, 4], 4)


def test_a_refusal_is_not_retried_and_nothing_moves() -> None:
    engine = FakeEngine(images={"local": NEW})
    previous = engine.seed_registry(A3, OLD)
    engine.push_errors[FULL] = [RegistryError("unauthorized: authentication required")]
    sleeps = Sleeps()
    with pytest.raises(PushError) as info:
        publish(NEW, TAGS, REGISTRY, _publisher(engine, sleeps))
    assert _pushes(engine) == [FULL]
    assert sleeps.waits == []
    assert "no tag moved in the registry" in info.value.cause
    assert engine.registry == {A3: previous}
    assert not any(ref.startswith(REGISTRY) for ref in engine.images)  # the local registry names went too


def test_an_alias_that_fails_puts_the_moved_aliases_back() -> None:
    engine = FakeEngine(images={"local": NEW})
    old_a1 = engine.seed_registry(A1, OLD)  # A1 existed (OLD); A2 did not; A3 existed
    old_a3 = engine.seed_registry(A3, OLD)
    engine.push_errors[A3] = [TransientRegistryError("502 Bad Gateway")] * 3
    sleeps = Sleeps()
    with pytest.raises(PushError) as info:
        publish(NEW, TAGS, REGISTRY, _publisher(engine, sleeps))
    new = registry_digest_of(NEW)
    states = info.value.states
    assert list(states) == [FULL, A1, A2, A3]
    assert states[FULL] == f"pushed {new}"
    assert states[A1] == f"put back to {old_a1}"
    assert states[A2].startswith(f"moved to {new} (a new tag")
    assert states[A3] == f"not moved (still {old_a3})"
    assert engine.registry == {FULL: new, A1: old_a1, A2: new, A3: old_a3}
    assert f"pull {REMOTE}@{old_a1}" in engine.calls  # put back by pulling the old digest and pushing it
    assert sleeps.waits == [2.0, 6.0]
    paragraph = info.value.paragraph(width=10_000)
    for ref in (FULL, A1, A2, A3):
        assert ref in paragraph
    assert "push command again" in info.value.fix
    assert engine.images.get(A3) != NEW  # the local name of the alias that never moved is not left on the new image


def test_an_unreadable_registry_stops_before_any_push() -> None:
    engine = FakeEngine(images={"local": NEW}, lookup_errors=[RegistryError("http: server gave HTTP response")])
    with pytest.raises(PushError, match="nothing was pushed") as info:
        publish(NEW, TAGS, REGISTRY, _publisher(engine))
    assert _pushes(engine) == []
    assert "docker login 127.0.0.1:5000" in info.value.fix


def test_ctrl_c_during_the_aliases_says_where_each_tag_is() -> None:
    class Interrupting(FakeEngine):
        def push(self, ref: str, on_progress: object) -> object:  # type: ignore[override]
            if ref == A2:
                raise KeyboardInterrupt
            return super().push(ref, lambda _: None)

    engine = Interrupting(images={"local": NEW})
    with pytest.raises(PushError) as info:
        publish(NEW, TAGS, REGISTRY, _publisher(engine))
    assert info.value.exit_status == 130
    assert info.value.states[A1].startswith("moved to")
    assert info.value.states[A2] == "not moved (still absent)"


def test_ctrl_c_before_the_first_push_moves_no_registry_tag() -> None:
    engine = FakeEngine(images={"local": NEW}, lookup_errors=[KeyboardInterrupt()])  # type: ignore[list-item]
    with pytest.raises(PushError) as info:
        publish(NEW, TAGS, REGISTRY, _publisher(engine))
    assert info.value.exit_status == 130
    assert set(info.value.states.values()) == {"not moved"}
    assert _pushes(engine) == []
    assert not any(ref.startswith(REGISTRY) for ref in engine.images)


def test_the_pipeline_pushes_after_the_local_tags(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    variant = select_variant(matrix, "cu12")
    plan = cu12_plan(matrix, root, variant)
    plan = replace(plan, registry=REGISTRY)
    engine = FakeEngine(images={"pytorch-cuda-base/debian:trixie": "sha256:base"})
    logged: list[str] = []
    hooks = PipelineHooks(
        log=logged.append, progress=lambda _: None, index_probe=lambda: None, log_dir=tmp_path, sleep=Sleeps()
    )
    outcome = execute(plan, engine, hooks)
    assert engine.calls.index(f"tag {plan.tags.full_ref}") < engine.calls.index(f"push {REGISTRY}/{plan.tags.full_ref}")
    assert outcome.published is not None
    assert list(outcome.published.digests) == [f"{REGISTRY}/{ref}" for ref in plan.tags.all_refs]
    assert outcome.notes == ("registry build cache: not used: the fake client cannot export cache",)
    assert engine.last_build is not None
    assert engine.last_build.cache_to == ()
    assert outcome.sbom is not None
    assert (outcome.sbom.python, outcome.sbom.deb) == (1, 1)
    assert (tmp_path / "sbom-cu128-runtime.cdx.json").exists()


def test_the_build_uses_the_registry_cache_where_the_client_can(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    plan = cu12_plan(matrix, root)
    engine = FakeEngine(images={"pytorch-cuda-base/debian:trixie": "sha256:base"}, cache_gap=None)
    hooks = PipelineHooks(log=lambda _: None, progress=lambda _: None, index_probe=lambda: None, log_dir=tmp_path)
    outcome = execute(replace(plan, registry=REGISTRY), engine, hooks)
    assert engine.last_build is not None
    assert engine.last_build.cache_from == (f"{REGISTRY}/pytorch-cuda:buildcache-cu128-runtime",)
    assert engine.last_build.cache_to == engine.last_build.cache_from
    assert outcome.notes == ()


def _build_py(*args: str) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parents[3]
    return subprocess.run([sys.executable, str(root / "build.py"), *args], capture_output=True, text=True, timeout=120)


def test_push_needs_a_registry_and_a_host() -> None:
    alone = _build_py("push", "--target", "cu12")
    assert alone.returncode == 2
    assert "the following arguments are required: --registry" in alone.stderr
    hostless = _build_py("push", "--target", "cu12", "--registry", "ci", "--dry-run")
    assert hostless.returncode == 2
    assert "names no registry host" in hostless.stderr


def test_dry_run_shows_the_push_order() -> None:
    result = _build_py("push", "--target", "cu12", "--registry", REGISTRY, "--dry-run", "--json")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["push"][0] == f"{REMOTE}:2.9.1-cuda12.8-cudnn9.10-py3.13-runtime"
    assert plan["push"][-1] == f"{REMOTE}:v2.9"
    assert plan["steps"][-1].startswith(f"push {REMOTE}:2.9.1-cuda12.8-cudnn9.10-py3.13-runtime first")


def test_push_candidate_pushes_the_candidate_tag_alone() -> None:
    result = _build_py("push", "--target", "cu12", "--candidate", "--registry", REGISTRY, "--dry-run", "--json")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["push"] == [f"{REGISTRY}/{plan['candidate']}"]
    assert "alone" in plan["steps"][-1]
    without_push = _build_py("build", "--target", "cu12", "--candidate", "--dry-run")
    assert without_push.returncode == 2
    assert "unrecognized arguments: --candidate" in without_push.stderr


def test_the_pipeline_pushes_only_the_candidate_with_push_candidate(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    plan = cu12_plan(matrix, root)
    plan = replace(plan, registry=REGISTRY, push_candidate=True)
    engine = FakeEngine(images={"pytorch-cuda-base/debian:trixie": "sha256:base"})
    hooks = PipelineHooks(
        log=lambda _: None, progress=lambda _: None, index_probe=lambda: None, log_dir=tmp_path, sleep=Sleeps()
    )
    outcome = execute(plan, engine, hooks)
    assert outcome.published is not None
    assert list(outcome.published.digests) == [f"{REGISTRY}/{plan.candidate}"]
    assert _pushes(engine) == [f"{REGISTRY}/{plan.candidate}"]
    # what `push --candidate-file` writes for the GPU jobs: the same repository, by the digest pushed
    (digest,) = outcome.published.digests.values()
    assert candidate_by_digest(outcome.published.digests, plan.variant.key) == f"{REGISTRY}/pytorch-cuda@{digest}"
    assert engine.images.get(plan.tags.full_ref)  # the local release tags moved: the checks passed here
