"""--verify-reproducible and the two times of a build (issue 40), on the fake engine: the files' time is
matrix.yaml's fixed SOURCE_DATE_EPOCH (declared in the Dockerfile, so the layer cache holds across commits),
the config's is the commit's; the second build runs with --no-cache under a tag of its own, and a difference
is refused naming the layers and files."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytorch_cuda.engine.protocol import BuildResult, EngineBuild, ProgressSink
from pytorch_cuda.errors import ChecksFailedError
from pytorch_cuda.image_build.build_plan import BuildPlan
from pytorch_cuda.image_build.gitinfo import build_facts
from pytorch_cuda.image_build.pipeline import PipelineHooks, engine_request, execute
from pytorch_cuda.image_build.reproducible import (
    APART_SHIFT_SECONDS,
    build_apart_and_compare,
    rebuild_and_compare,
    require_reproducible,
)
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.labels import BuildFacts
from tests.support.fake_engine import FakeEngine
from tests.support.layer_leak import layer_dirs_holding
from tests.support.plans import cu12_plan

BASE = "pytorch-cuda-base/debian:trixie"
COMMIT_TIME = 1796515200


class DriftingEngine(FakeEngine):
    """The second build (its tag ends in -again) gives another image, as a run-dependent file would."""

    def build(self, request: EngineBuild, on_progress: ProgressSink) -> BuildResult:
        result = super().build(request, on_progress)
        if request.tag.endswith("-again"):
            self.images[request.tag] = "sha256:other"
            return BuildResult("sha256:other", 1.0, 0, 1)
        return result


def _plan(matrix: Matrix, root: Path) -> BuildPlan:
    facts = BuildFacts("abc", "2026-12-06T00:00:00Z", created_epoch=COMMIT_TIME)
    return cu12_plan(matrix, root, facts=facts, run_checks=False)


def _hooks(tmp_path: Path) -> PipelineHooks:
    return PipelineHooks(log=lambda _: None, progress=lambda _: None, index_probe=lambda: None, log_dir=tmp_path)


def test_files_carry_the_matrix_time_and_the_config_the_commit_time(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    plan = _plan(matrix, root)
    assert plan.source_date_epoch == matrix.project.source_date_epoch != COMMIT_TIME
    assert plan.as_dict()["created_epoch"] == COMMIT_TIME
    request = engine_request(plan, "sha256:base", {}, tmp_path)
    assert request.created_epoch == COMMIT_TIME  # the engine stamps the config with it
    # no build argument: a new commit must not change a RUN's cache key; the Dockerfile holds the file time
    assert "SOURCE_DATE_EPOCH" not in request.build_args
    assert f"ARG SOURCE_DATE_EPOCH={matrix.project.source_date_epoch}\n" in plan.dockerfile.read_text()


def test_the_commit_time_is_the_creation_time_unless_source_date_epoch_is_set(root: Path) -> None:
    committed = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    assert build_facts(root, {}).created_epoch == int(committed.stdout)
    given = build_facts(root, {"SOURCE_DATE_EPOCH": "1796515200"})
    assert (given.created_epoch, given.created) == (1796515200, "2026-12-06T00:00:00Z")
    assert build_facts(root, {"SOURCE_DATE_EPOCH": "yesterday"}).created_epoch == int(committed.stdout)


def test_verify_builds_again_without_cache_under_its_own_tag(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "sha256:base"})
    plan = _plan(matrix, root)
    outcome = execute(plan, engine, _hooks(tmp_path))
    [check] = rebuild_and_compare([outcome], engine, _hooks(tmp_path))
    assert engine.last_build is not None
    assert (engine.last_build.tag, engine.last_build.no_cache) == (plan.candidate + "-again", True)
    assert engine.last_build.created_epoch == COMMIT_TIME
    # no tag of the second build is left, nor its build cache; the first build's cache stays
    assert engine.calls[-2:] == [f"untag {plan.candidate}-again", "drop build cache 1"]
    assert list(engine.build_cache) == ["record-0"]
    assert check.as_dict()["second_build_cache_removed"] == {"records": 1, "bytes": 1000}
    assert check.reproducible
    assert check.differences == ()
    assert check.as_dict()["source_date_epoch"] == matrix.project.source_date_epoch
    assert check.as_dict()["second_build_cached_steps"] == "0/1"
    require_reproducible([check])


def test_a_different_second_build_is_refused_naming_layers_and_files(
    matrix: Matrix, root: Path, tmp_path: Path
) -> None:
    engine = DriftingEngine(images={BASE: "sha256:base"})
    outcome = execute(_plan(matrix, root), engine, _hooks(tmp_path))
    [check] = rebuild_and_compare([outcome], engine, _hooks(tmp_path))
    assert not check.reproducible
    assert check.differences == ("layer 1: RUN true", "  etc/hello: mtime 1 != 2")
    assert engine.calls[-3:] == [
        "diff sha256:new sha256:other",
        f"untag {outcome.plan.candidate}-again",
        "drop build cache 1",
    ]
    with pytest.raises(ChecksFailedError) as info:
        require_reproducible([check])
    assert "cu128-runtime: sha256:new != sha256:other" in info.value.cause
    assert "etc/hello: mtime 1 != 2" in info.value.cause


@dataclass
class BuildRecorder(FakeEngine):
    """Records, at each build, the images the engine holds: the pair's first must be gone when its second starts."""

    held: list[set[str]] = field(default_factory=list)

    def build(self, request: EngineBuild, on_progress: ProgressSink) -> BuildResult:
        self.held.append(set(self.images))
        return super().build(request, on_progress)


def test_apart_builds_a_pair_at_another_file_time_removing_the_first_before_the_second(
    matrix: Matrix, root: Path, tmp_path: Path
) -> None:
    engine = BuildRecorder(images={BASE: "sha256:base"})
    plan = _plan(matrix, root)
    outcome = execute(plan, engine, _hooks(tmp_path))
    [check] = build_apart_and_compare([outcome], engine, _hooks(tmp_path))
    first, second = f"{plan.candidate}-apart-1", f"{plan.candidate}-apart-2"
    assert engine.calls[-6:] == [
        f"build {first}",
        f"untag {first}",
        "drop build cache 1",
        f"build {second}",
        "drop build cache 1",
        f"untag {second}",
    ]
    assert first not in engine.held[-1]  # the first image was gone when the second build started
    assert engine.last_build is not None
    epoch = matrix.project.source_date_epoch + APART_SHIFT_SECONDS
    assert engine.last_build.build_args["SOURCE_DATE_EPOCH"] == str(epoch)
    assert (engine.last_build.no_cache, engine.last_build.created_epoch) == (True, COMMIT_TIME)
    assert check.as_dict()["mode"] == "apart"
    assert check.as_dict()["source_date_epoch"] == epoch
    assert check.as_dict()["second_build_cache_removed"] == {"records": 2, "bytes": 2000}
    assert list(engine.build_cache) == ["record-0"]  # the release build's cache stays
    assert not {first, second} & set(engine.images)
    require_reproducible([check])


def test_apart_refuses_a_pair_that_differs(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    class PairDrifts(FakeEngine):
        def build(self, request: EngineBuild, on_progress: ProgressSink) -> BuildResult:
            result = super().build(request, on_progress)
            return BuildResult("sha256:other", 1.0, 0, 1) if request.tag.endswith("-apart-2") else result

    engine = PairDrifts(images={BASE: "sha256:base"})
    outcome = execute(_plan(matrix, root), engine, _hooks(tmp_path))
    [check] = build_apart_and_compare([outcome], engine, _hooks(tmp_path))
    assert not check.reproducible
    assert engine.calls[-1] == f"untag {outcome.plan.candidate}-apart-2"
    with pytest.raises(ChecksFailedError) as info:
        require_reproducible([check])
    assert "sha256:new != sha256:other" in info.value.cause
    assert "layer 3 of 3: sha256:topnew != sha256:topother" in info.value.cause  # only the top layer differs
    assert "--verify-reproducible names their files" in info.value.cause
    assert len(check.differences) == 2


def test_the_leak_check_finds_a_layer_directory_holding_a_file_of_the_pairs_time(tmp_path: Path) -> None:
    """tests/support/layer_leak.py, which the integration test runs after the pair: a directory left behind is named,
    one of other times (the release's layers, at matrix.yaml's time) is not."""
    pair_time = 1796083201
    for name, mtime in (("kept", pair_time - 1), ("left", pair_time)):
        made = tmp_path / name / "diff" / "opt" / "pytorch" / "bin" / "python"
        made.parent.mkdir(parents=True)
        made.write_text("")
        for path in (made, *list(made.parents)[:4]):
            os.utime(path, (pair_time - 1, pair_time - 1))
        os.utime(made, (mtime, mtime))
    assert layer_dirs_holding(tmp_path, pair_time) == ["left"]
    assert layer_dirs_holding(tmp_path, pair_time, depth=3) == []  # python is 4 levels down
