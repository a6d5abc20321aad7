"""`build`/`push` with several --target values or a group: each target once, in order, every outcome reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli
from pytorch_cuda.cli import building
from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda.image_build import build_plan
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.target_selection import expand_targets
from tests.support.fake_engine import FakeEngine, conformance_results

BASE = "pytorch-cuda-base/debian:trixie"


def _unreachable_outside_pypi(index: str, ca: object = None) -> None:
    if "download.pytorch.org" in index:
        raise EngineError(f"the package index {index} is unreachable from this machine", "use a mirror")


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> FakeEngine:
    fake = FakeEngine(images={BASE: "sha256:base"})
    monkeypatch.setattr(building, "connect", lambda: None)
    monkeypatch.setattr(building, "find_build_client", lambda: None)
    monkeypatch.setattr(building, "DockerEngine", lambda *_: fake)
    monkeypatch.setattr(building, "probe_index", _unreachable_outside_pypi)
    monkeypatch.setattr(build_plan, "probe_index", _unreachable_outside_pypi)
    return fake


@pytest.fixture
def every_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if cu126 and cu130 were locked (they cannot be here): for what the plan says besides its locks."""
    monkeypatch.setattr(building, "require_lock", lambda *_: None)


def test_targets_groups_and_aliases_expand_in_order(matrix: Matrix) -> None:
    assert expand_targets(matrix, ["cu13", "cu12"]) == ["cu130", "cu128"]
    assert expand_targets(matrix, ["all"]) == sorted(matrix.targets)
    assert expand_targets(matrix, ["all"], "devel") == ["cu130"]  # a group leaves out what the flavour fits not
    with pytest.raises(UserError, match="asks for target 'cu128' a second time"):
        expand_targets(matrix, ["cu12", "cu128"])
    with pytest.raises(UserError, match="a second time"):
        expand_targets(matrix, ["all", "cu13"])
    with pytest.raises(UserError, match=r"not a target of the matrix \(did you mean 'cu128'\?\)"):
        expand_targets(matrix, ["cu1280"])


@pytest.mark.parametrize("argv", [["--target", "cu12", "--target", "cu12"], ["--target", "all", "--target", "cu13"]])
def test_a_duplicate_target_exits_2_before_anything_runs(
    argv: list[str], engine: FakeEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["build", *argv]) == 2
    assert "a second time" in " ".join(capsys.readouterr().err.split())
    assert engine.calls == []


def test_a_failing_target_does_not_hide_the_others(
    engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metadata = tmp_path / "metadata.json"
    argv = ["--target", "cu13", "--target", "cu12", "--log-dir", str(tmp_path), "--metadata-file", str(metadata)]
    status = cli.main(["build", *argv, "--json"])
    assert status == 2
    assert list(json.loads(metadata.read_text())) == ["cu128"]  # bake's shape, keyed by target: cu130 failed
    found = json.loads(capsys.readouterr().out)
    by_target: dict[str, Any] = {row["target"]: row for row in found["targets"]}
    assert [row["target"] for row in found["targets"]] == ["cu130", "cu128"]
    assert found["failed"] == ["cu130"]
    assert found["exit_status"] == 2
    assert by_target["cu130"]["ok"] is False
    assert "unreachable" in by_target["cu130"]["cause"]
    assert by_target["cu128"]["ok"] is True
    assert by_target["cu128"]["variant"] == "cu128-runtime"
    assert any(call.startswith("build") for call in engine.calls)


def test_failed_checks_give_1_and_the_other_target_is_still_built(
    engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine.run_exit_code, engine.run_results = 1, conformance_results({"t": "failed"})
    status = cli.main(["build", "--target", "cu12", "--target", "cu126", "--log-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 2  # cu126 cannot be locked here (2) outranks cu128's failed checks (1)
    assert "[1/2] target cu128" in err
    assert "[2/2] target cu126" in err
    lines = " ".join(out.split())
    assert "cu128: failed (exit 1)" in lines
    assert "cu126: failed (exit 2)" in lines


def test_a_flavour_is_built_after_its_runtime_for_each_target(
    engine: FakeEngine, every_lock: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["build", "--target", "all", "--flavour", "devel", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["variant"] == "cu130-devel"  # one target (only cu130 has devel): the one-target shape
    assert [p["variant"] for p in plan["built_first"]] == ["cu130-runtime"]
    assert (
        cli.main(["build", "--target", "cu12", "--target", "cu13", "--flavour", "jupyter", "--dry-run", "--json"]) == 0
    )
    rows = json.loads(capsys.readouterr().out)["targets"]
    assert [(r["variant"], [p["variant"] for p in r["built_first"]]) for r in rows] == [
        ("cu128-jupyter", ["cu128-runtime"]),
        ("cu130-jupyter", ["cu130-runtime"]),
    ]
    assert engine.calls == []


def test_push_takes_several_targets(engine: FakeEngine, every_lock: None, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["push", "--target", "all", "--registry", "127.0.0.1:5000/ci", "--dry-run", "--json"]
    assert cli.main(argv) == 0
    rows = json.loads(capsys.readouterr().out)["targets"]
    assert [r["target"] for r in rows] == ["cu126", "cu128", "cu130"]
    assert all(r["push"] for r in rows)


def test_a_dry_run_plans_what_can_be_built_and_says_why_the_rest_is_left_out(
    engine: FakeEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["build", "--target", "all", "--dry-run"]) == 2  # what the build would exit with
    lines = " ".join(capsys.readouterr().out.split())
    assert "cu128: planned" in lines
    assert "cu130: left out (exit 2): images/cu130-runtime/requirements.lock does not exist" in lines
    assert "cu126: planned" not in lines
    assert cli.main(["build", "--target", "all", "--dry-run", "--json"]) == 2
    found = json.loads(capsys.readouterr().out)
    assert found["failed"] == ["cu126", "cu130"]
    assert [r["target"] for r in found["targets"] if r["ok"]] == ["cu128"]
    assert cli.main(["build", "--target", "cu13", "--dry-run"]) == 2
    assert "requirements.lock does not exist" in capsys.readouterr().err
    assert engine.calls == []


def test_matrix_groups_name_targets_and_are_checked(matrix_text: str, tmp_path: Path) -> None:
    from pytorch_cuda.errors import MatrixError
    from pytorch_cuda.matrix.build_matrix import load_matrix

    path = tmp_path / "matrix.yaml"
    path.write_text(matrix_text + "\ngroups:\n  cuda12: [cu126, cu12]\n")
    grouped = load_matrix(path)
    assert expand_targets(grouped, ["cuda12"]) == ["cu126", "cu128"]
    with pytest.raises(UserError, match="a second time"):
        expand_targets(grouped, ["cuda12", "cu12"])
    for bad, needle in (("cu12: [cu130]", "has the name of a target"), ("twelve: [cu99]", r"names \['cu99'\]")):
        path.write_text(matrix_text + f"\ngroups:\n  {bad}\n")
        with pytest.raises(MatrixError, match=needle):
            load_matrix(path)
