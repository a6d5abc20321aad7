"""The CLI through its real entry point, with a dead engine (or, in process, the engine check faked up)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda import cli
from tests.support.build_command import build_py

ROOT = Path(__file__).resolve().parents[3]


def test_help_reads_well() -> None:
    result = build_py("--help")
    assert result.returncode == 0
    for text in ("--target", "list", "--dry-run", "render --check", "--json", "exit status", "release"):
        assert text in result.stdout


def test_list_json() -> None:
    result = build_py("list", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["variant"]: row for row in json.loads(result.stdout)}
    assert rows["cu128-runtime"]["torch"] == "2.9.1+cu128"
    assert "pytorch-cuda:v2.9" in rows["cu128-runtime"]["tags"]
    assert rows["cu130-runtime"]["aliases"] == ["cu13"]


def test_a_dry_run_without_an_engine_exits_as_the_build_would() -> None:
    """Exit 2 and the same engine-down paragraph as the real run, not a plan and exit 0 (issue 53)."""
    dead = {"DOCKER_HOST": "unix:///nonexistent.sock"}
    for form in ((), ("--json",)):
        real = build_py("--target", "cu12", *form, env=dead)
        dry = build_py("--target", "cu12", "--dry-run", *form, env=dead)
        assert (dry.returncode, real.returncode) == (2, 2), (dry.stderr, real.stderr)
        assert "no Docker engine is running at unix:///nonexistent.sock" in " ".join(dry.stderr.split())
        assert (dry.stdout, dry.stderr) == (real.stdout, real.stderr)


def test_a_dry_run_plans_and_runs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--target", "cu12", "--dry-run", "--json"], start=ROOT) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["variant"] == "cu128-runtime"
    assert plan["tags"][0] == "pytorch-cuda:2.9.1-cuda12.8-cudnn9.10-py3.13-runtime"
    assert plan["candidate"].startswith("pytorch-cuda:candidate-cu128-runtime-")


def test_check_render_passes_on_the_committed_tree() -> None:
    assert build_py("render", "--check").returncode == 0


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (("--target", "cu99"), {}, "is not a target of the matrix"),
        (("--target", "cu12", "--flavour", "nosuch"), {}, "is not a flavour"),
        (("--target", "cu12"), {"DOCKER_HOST": "unix:///nonexistent.sock"}, "no Docker engine is running"),
        (("--target", "cu12", "--ca-bundle", "/nonexistent.pem"), {}, "does not exist"),
        (("list", "--matrix", "/nonexistent/matrix.yaml"), {}, "does not exist"),
        (("--dry-run",), {}, "required"),
        (("--target",), {}, "expected one argument"),
    ],
)
def test_bad_input_exits_2_with_one_paragraph(args: tuple[str, ...], env: dict[str, str], needle: str) -> None:
    result = build_py(*args, env=env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert needle in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


def test_errors_in_json_mode_are_json(tmp_path: Path) -> None:
    result = build_py("--target", "cu12", "--json", env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert result.returncode == 2
    error = json.loads(result.stdout)
    assert error["error"] == "EngineError"
    assert "setup-docker.sh" in error["fix"]


def test_bad_matrix_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "matrix.yaml"
    bad.write_text((ROOT / "matrix.yaml").read_text().replace('nccl: "2.27.5"', 'nccl: "latest"', 1))
    result = build_py("list", "--matrix", str(bad))
    assert result.returncode == 2
    text = " ".join(result.stderr.split())
    assert "targets.cu128.nccl" in text
    assert "'latest'" in text


def test_a_candidate_file_without_a_candidate_push_is_bad_input(tmp_path: Path) -> None:
    result = build_py(
        "push", "--target", "cu12", "--registry", "127.0.0.1:9/x", "--candidate-file", str(tmp_path / "c")
    )
    assert result.returncode == 2
    assert "--candidate-file writes the candidate of one variant's `push --candidate`" in result.stderr
    assert not (tmp_path / "c").exists()


def test_the_candidate_file_holds_the_pushed_candidate_by_digest(tmp_path: Path) -> None:
    from pytorch_cuda.cli.metadata_file import write_candidate_file
    from pytorch_cuda.errors import UserError

    digest = "sha256:" + "d" * 64
    found = {"variant": "cu128-runtime", "digests": {"ghcr.io/o/pytorch-cuda:candidate-cu128-runtime-9": digest}}
    write_candidate_file(tmp_path / "candidate.txt", found)
    assert (tmp_path / "candidate.txt").read_text(encoding="utf-8") == f"ghcr.io/o/pytorch-cuda@{digest}\n"
    with pytest.raises(UserError, match="reported no digest for a candidate tag"):
        write_candidate_file(tmp_path / "none.txt", {"variant": "cu128-runtime", "digests": {}})
