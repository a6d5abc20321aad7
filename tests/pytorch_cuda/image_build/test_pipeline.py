from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytorch_cuda.engine.build_failure import HashMismatchError
from pytorch_cuda.errors import ChecksFailedError, EngineError
from pytorch_cuda.image_build.build_plan import BuildPlan
from pytorch_cuda.image_build.pipeline import PipelineHooks, execute
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.steps.base_image import bootstrap_command, ensure_base
from pytorch_cuda.steps.in_image_checks import RESULTS_PATH
from tests.support.fake_engine import FakeEngine, conformance_results
from tests.support.plans import FACTS, cu12_plan

BASE = "pytorch-cuda-base/debian:trixie"
OLD = "sha256:old"


def _plan(matrix: Matrix, root: Path, ca: Path | None = None, checks: bool = True) -> BuildPlan:
    return cu12_plan(matrix, root, ca_bundle=ca, ca_source="PIP_CERT" if ca else None, run_checks=checks)


def _hooks(tmp_path: Path, probe_error: Exception | None = None) -> PipelineHooks:
    def probe() -> None:
        if probe_error:
            raise probe_error

    return PipelineHooks(log=lambda _: None, progress=lambda _: None, index_probe=probe, log_dir=tmp_path)


def test_success_moves_every_tag_and_drops_the_candidate(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "sha256:base", "pytorch-cuda:v2.9": OLD})
    plan = _plan(matrix, root, ca=Path("/etc/ssl/certs/ca-certificates.crt"))
    outcome = execute(plan, engine, _hooks(tmp_path))
    assert outcome.image_id == "sha256:new"
    for ref in plan.tags.all_refs:
        assert engine.images[ref] == "sha256:new"
    assert plan.candidate not in engine.images
    assert {m.ref: m.previous_id for m in outcome.moves}["pytorch-cuda:v2.9"] == OLD
    assert engine.last_build is not None
    assert engine.last_build.secrets == {"pip_ca": Path("/etc/ssl/certs/ca-certificates.crt")}
    assert engine.last_build.tag == plan.candidate
    assert engine.last_build.labels["org.opencontainers.image.revision"] == FACTS.revision
    run_call = next(c for c in engine.calls if c.startswith("run "))
    assert "conformance -m cpu" in run_call
    assert "shm=2g" in run_call
    # checks ran before the first tag moved
    assert engine.calls.index(run_call) < engine.calls.index(f"tag {plan.tags.full_ref}")


@pytest.mark.parametrize(
    ("exit_code", "results"),
    [
        (1, conformance_results({"test_pins.py::test_torch_version": "failed"})),
        (0, None),  # no result file: the suite did not run at all
        (0, conformance_results({"test_x": "skipped"})),  # nothing passed
        (0, conformance_results({"test_x": "passed"})[:-10]),  # truncated result file
    ],
)
def test_failed_checks_leave_old_aliases_untouched(
    matrix: Matrix, root: Path, tmp_path: Path, exit_code: int, results: bytes | None
) -> None:
    engine = FakeEngine(
        images={BASE: "sha256:base", "pytorch-cuda:v2.9": OLD}, run_exit_code=exit_code, run_results=results
    )
    plan = _plan(matrix, root)
    with pytest.raises(ChecksFailedError, match="no tag was moved"):
        execute(plan, engine, _hooks(tmp_path))
    assert engine.images["pytorch-cuda:v2.9"] == OLD
    assert plan.tags.full_ref not in engine.images
    assert plan.candidate not in engine.images
    assert not any(c.startswith("tag ") for c in engine.calls)


def test_truncated_results_are_named_in_the_error(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    truncated = conformance_results({"test_x": "passed"})[:-10]
    engine = FakeEngine(images={BASE: "sha256:base"}, run_results=truncated)
    with pytest.raises(ChecksFailedError, match="truncated") as raised:
        execute(_plan(matrix, root), engine, _hooks(tmp_path))
    assert "Traceback" not in str(raised.value)


def test_failed_build_tags_nothing(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "b"}, build_error=EngineError("build broke", "fix it"))
    with pytest.raises(EngineError, match="build broke"):
        execute(_plan(matrix, root), engine, _hooks(tmp_path))
    assert not any(c.startswith("tag ") for c in engine.calls)


def test_a_hash_mismatch_is_named_by_the_locks_room(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    """The engine names the lock file the step mounted; the pipeline hands in the locks room's naming."""
    mismatch = HashMismatchError("jinja2==3.1.6", "images/cu128-runtime/layer-3-python.lock", "")
    engine = FakeEngine(images={BASE: "b"}, build_error=mismatch)
    with pytest.raises(EngineError) as raised:
        execute(_plan(matrix, root), engine, _hooks(tmp_path))
    assert type(raised.value) is EngineError
    assert "in images/cu128-runtime/requirements.lock (its layer slice layer-3-python.lock)" in raised.value.cause
    assert "`python build.py lock --target cu128`" in raised.value.fix
    assert not any(c.startswith("tag ") for c in engine.calls)
    assert _plan(matrix, root).candidate not in engine.images


def test_tag_failure_midway_rolls_back(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    plan = _plan(matrix, root)
    engine = FakeEngine(images={BASE: "b", "pytorch-cuda:v2.9": OLD}, fail_tag_on="pytorch-cuda:v2.9")
    with pytest.raises(EngineError, match="every tag was put back"):
        execute(plan, engine, _hooks(tmp_path))
    assert engine.images["pytorch-cuda:v2.9"] == OLD
    assert plan.tags.full_ref not in engine.images  # it was new, so it is gone again
    assert plan.candidate not in engine.images


def test_unreachable_index_stops_before_any_build(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "b"})
    with pytest.raises(EngineError, match="unreachable"):
        execute(_plan(matrix, root), engine, _hooks(tmp_path, EngineError("index unreachable", "mirror it")))
    assert not any(c.startswith("build") for c in engine.calls)


def test_full_disk_stops_before_any_build(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={BASE: "b"}, free_bytes=3 * 1024**3)
    with pytest.raises(EngineError, match=r"only 3.0 GiB is free"):
        execute(_plan(matrix, root), engine, _hooks(tmp_path))
    assert engine.calls == []


def test_base_present_is_used(matrix: Matrix) -> None:
    engine = FakeEngine(images={BASE: "sha256:base"})
    outcome = ensure_base(engine, matrix.bases["trixie"], log=lambda _: None)
    assert (outcome.how, engine.calls) == ("present", [])


def test_base_pulled_is_retagged_locally(matrix: Matrix) -> None:
    engine = FakeEngine(pull_error=None)
    outcome = ensure_base(engine, matrix.bases["trixie"], log=lambda _: None)
    assert outcome.how == "pulled"
    assert engine.images[BASE] == "sha256:pulled"


def test_base_bootstrapped_when_pull_fails(matrix: Matrix, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/" + name)
    seen: list[list[str]] = []

    def fake_mmdebstrap(argv: list[str]) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        Path(next(arg for arg in argv if arg.endswith(".tar"))).write_text("rootfs")
        return subprocess.CompletedProcess(argv, 0, "", "")

    engine = FakeEngine()
    outcome = ensure_base(engine, matrix.bases["trixie"], log=lambda _: None, run=fake_mmdebstrap)
    assert outcome.how == "bootstrapped"
    assert engine.calls == ["pull docker.io/library/debian:trixie-slim", f"import {BASE}"]
    assert seen[0][0] == "mmdebstrap"
    assert seen[0][-5:-4] == ["trixie"]
    assert seen[0][-3].rstrip("/") == "http://deb.debian.org/debian"
    assert seen[0][-1] == "deb http://deb.debian.org/debian-security trixie-security main"
    assert engine.imported == ["rootfs"]


def test_bootstrap_failure_is_explained(matrix: Matrix, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/" + name)

    def failing(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 1, "", "E: cannot reach http://deb.debian.org")

    with pytest.raises(EngineError, match=r"mmdebstrap failed \(exit 1\).*cannot reach"):
        ensure_base(FakeEngine(), matrix.bases["trixie"], log=lambda _: None, run=failing)


def test_bootstrap_without_mmdebstrap_names_the_fix(matrix: Matrix, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(EngineError) as info:
        ensure_base(FakeEngine(), matrix.bases["trixie"], log=lambda _: None)
    assert "apt-get install mmdebstrap" in info.value.fix


def test_bootstrap_command_excludes_docs(matrix: Matrix, tmp_path: Path) -> None:
    argv = bootstrap_command(matrix.bases["trixie"], tmp_path / "x.tar")
    assert "--variant=minbase" in argv
    assert "--dpkgopt=path-exclude=/usr/share/doc/*" in argv


def test_results_path_is_what_the_wrapper_writes(root: Path) -> None:
    wrapper = (root / "images/bin/conformance").read_text()
    assert '--conformance-json="$out/results.json"' in wrapper
    assert RESULTS_PATH == "/tmp/conformance/results.json"
    assert 'out="${CONFORMANCE_OUT:-/tmp/conformance}"' in wrapper
