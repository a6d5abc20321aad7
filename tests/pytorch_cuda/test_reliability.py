"""Exit status of each failure class, the check memo, the per-variant build lock, Ctrl-C and the new flags."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests.exceptions

from pytorch_cuda import cli
from pytorch_cuda.cli import building
from pytorch_cuda.errors import BuildBusyError, ChecksFailedError, EngineError, MatrixError, UserError
from pytorch_cuda.image_build.build_mutex import variant_mutex
from pytorch_cuda.image_build.build_plan import BuildPlan
from pytorch_cuda.image_build.pipeline import PipelineHooks, execute
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.steps.check_memo import recall, remember
from pytorch_cuda.steps.in_image_checks import CheckReport
from pytorch_cuda.steps.move_tags import move_tags
from pytorch_cuda_contract.suite_digest import suite_tree_digest
from tests.support.fake_engine import FakeEngine, conformance_results
from tests.support.plans import cu12_plan

BASE = "pytorch-cuda-base/debian:trixie"


def _plan(matrix: Matrix, root: Path, **flags: bool) -> BuildPlan:
    return cu12_plan(matrix, root, None, **flags)


def _hooks(tmp_path: Path, logged: list[str] | None = None) -> PipelineHooks:
    sink = logged if logged is not None else []
    return PipelineHooks(log=sink.append, progress=lambda _: None, index_probe=lambda: None, log_dir=tmp_path)


def _runs(engine: FakeEngine) -> int:
    return sum(call.startswith("run ") for call in engine.calls)


def test_a_passing_image_id_is_not_checked_twice_unless_rechecked(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "b"})
    first = execute(_plan(matrix, root), engine, _hooks(tmp_path))
    assert first.checks is not None
    assert not first.checks.reused
    logged: list[str] = []
    again = execute(_plan(matrix, root), engine, _hooks(tmp_path, logged))
    assert _runs(engine) == 1
    assert again.checks is not None
    assert again.checks.reused
    assert again.checks.counts == {"passed": 1}
    assert any("reusing the passing result" in line for line in logged)
    execute(_plan(matrix, root, recheck=True), engine, _hooks(tmp_path))
    assert _runs(engine) == 2


def test_a_failing_result_is_never_remembered(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "b"}, run_exit_code=1, run_results=conformance_results({"t": "failed"}))
    for _ in range(2):
        with pytest.raises(ChecksFailedError):
            execute(_plan(matrix, root), engine, _hooks(tmp_path))
    assert _runs(engine) == 2


def test_memo_is_keyed_by_image_and_suite(tmp_path: Path, root: Path) -> None:
    report = CheckReport(True, 0, {"passed": 3}, (), "ok", None)
    remember(tmp_path, "sha256:a", "suite1", report)
    assert recall(tmp_path, "sha256:a", "suite1") is not None
    assert recall(tmp_path, "sha256:b", "suite1") is None
    assert recall(tmp_path, "sha256:a", "suite2") is None
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_x.py").write_text("a")
    before = suite_tree_digest(suite)
    (suite / "test_x.py").write_text("b")
    assert suite_tree_digest(suite) != before


def test_no_cache_reaches_the_build(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "b"})
    execute(_plan(matrix, root, no_cache=True, run_checks=False), engine, _hooks(tmp_path))
    assert engine.last_build is not None
    assert engine.last_build.no_cache


def test_ctrl_c_during_the_build_leaves_no_candidate(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "b", "pytorch-cuda:v2.9": "old"}, build_error=KeyboardInterrupt())
    plan = _plan(matrix, root)
    with pytest.raises(KeyboardInterrupt):
        execute(plan, engine, _hooks(tmp_path))
    assert f"untag {plan.candidate}" in engine.calls
    assert engine.images["pytorch-cuda:v2.9"] == "old"


def test_a_lost_engine_does_not_hide_why_the_build_failed(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    lost = EngineError("the build client lost its connection to the Docker daemon", "check that the engine is up")
    engine = FakeEngine(
        images={BASE: "b", "pytorch-cuda:v2.9": "old"},
        build_error=lost,
        untag_error=requests.exceptions.ConnectionError("Connection aborted."),
    )
    plan = _plan(matrix, root)
    logged: list[str] = []
    with pytest.raises(EngineError) as raised:
        execute(plan, engine, _hooks(tmp_path, logged))
    assert raised.value is lost
    assert f"untag {plan.candidate}" in engine.calls
    assert any(f"could not remove the candidate tag {plan.candidate} (Connection aborted.)" in line for line in logged)
    assert engine.images["pytorch-cuda:v2.9"] == "old"


def test_after_a_good_build_a_failing_untag_is_reported(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "b"}, untag_error=EngineError("the engine did not answer", "start it"))
    with pytest.raises(EngineError, match="did not answer"):
        execute(_plan(matrix, root), engine, _hooks(tmp_path))


def test_ctrl_c_between_two_tags_puts_the_first_back() -> None:
    class Interrupting(FakeEngine):
        def tag(self, image_id: str, ref: str) -> None:
            if ref == "b" and image_id == "new":
                raise KeyboardInterrupt
            super().tag(image_id, ref)

    engine = Interrupting(images={"a": "old-a", "b": "old-b"})
    with pytest.raises(KeyboardInterrupt):
        move_tags(engine, "new", ["a", "b"])
    assert engine.images == {"a": "old-a", "b": "old-b"}


def test_a_second_build_of_the_same_variant_refuses(tmp_path: Path) -> None:
    with variant_mutex(tmp_path, "cu128-runtime"), pytest.raises(BuildBusyError) as info:  # noqa: SIM117
        with variant_mutex(tmp_path, "cu128-runtime"):
            pass
    assert "another build of cu128-runtime is running" in info.value.cause
    assert f"pid {__import__('os').getpid()}" in info.value.cause
    with variant_mutex(tmp_path, "cu128-runtime"), variant_mutex(tmp_path, "cu130-runtime"):
        pass  # released after use; other variants are independent


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (ChecksFailedError("checks failed", "fix"), 1),
        (EngineError("engine down", "fix"), 2),
        (MatrixError("bad matrix", "fix"), 2),
        (BuildBusyError("busy", "wait"), 2),
        (UserError("bad input", "fix"), 2),
        (KeyboardInterrupt(), 130),
    ],
)
def test_exit_status_of_each_failure_class(
    error: BaseException, status: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def failing(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(building, "connect", lambda: None)
    monkeypatch.setattr(building, "find_build_client", lambda: None)
    monkeypatch.setattr(building, "DockerEngine", lambda *a: None)
    monkeypatch.setattr(building, "execute_lineage", failing)
    assert cli.main(["--target", "cu12", "--log-dir", str(tmp_path)]) == status


def test_help_and_readme_agree_on_exit_status(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "1 stale images/ or lock (render --check), or failed in-image checks" in text
    readme = " ".join((root / "README.md").read_text().split())
    assert "Failed in-image checks exit with status 1" in readme


def test_version_and_progress_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert "pytorch-cuda" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        cli.main(["--target", "cu12", "--progress", "loud"])
    assert info.value.code == 2
    assert cli.main(["--target", "cu12", "--dry-run", "--progress", "plain", "--no-cache", "--recheck"]) == 0


def test_a_stale_lock_fails_check_render_with_1(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bumped = tmp_path / "matrix.yaml"
    bumped.write_text((root / "matrix.yaml").read_text().replace('numpy: "2.5.5"', 'numpy: "2.5.4"'))
    assert cli.main(["render", "--check", "--matrix", str(bumped)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "images/cu128-runtime/requirements.lock: stale: requirements.txt changed since it was locked" in out
    assert cli.main(["render", "--check"]) == 0
