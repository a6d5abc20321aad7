"""bump over every target: an unreachable index is marked, its target left out, and the rest goes on;
exit status 4 says the result is partial; progress lines go to stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda import cli
from pytorch_cuda.bump.bump_flow import BumpRequest, run_bump
from pytorch_cuda.bump.bump_plan import plan_bump
from pytorch_cuda.bump.bump_policy import parse_policy
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix
from tests.support.bump_indexes import CU126, CU130, cu130_down, pins
from tests.support.offline_bump import bump_offline

ROOT = Path(__file__).resolve().parents[3]


def test_an_unreachable_index_is_isolated_to_its_target(matrix: Matrix) -> None:
    logged: list[str] = []
    plan = plan_bump(
        matrix, parse_policy(matrix.policy), ["cu128", "cu126", "cu130"], cu130_down, pins, log=logged.append
    )
    checks = {t.target: t for t in plan.targets}
    assert checks["cu130"].unreachable == f"cannot read {CU130}/torch/ (Name or service not known)"
    assert checks["cu128"].unreachable is None
    assert checks["cu126"].index == CU126
    assert plan.partial
    moved = {move.where: move.resolution.new for move in plan.moved}
    assert moved["targets.cu128.torch"] == "2.9.2"
    assert moved["python_packages.numpy"] == "2.5.6"  # still held to what the reachable cu126 index has
    assert not any(move.path[:2] == ("targets", "cu130") for move in plan.moves)
    assert any(line.startswith("target cu130: left out: cannot read") for line in logged)


def test_with_every_index_unreachable_the_error_stands(matrix: Matrix) -> None:
    with pytest.raises(UserError, match="cannot read"):
        plan_bump(matrix, parse_policy(matrix.policy), ["cu130"], cu130_down, pins)


def test_bump_without_target_gives_every_target_in_one_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bump_offline(monkeypatch)
    assert cli.main(["bump", "--dry-run", "--json"]) == 4
    out, err = capsys.readouterr()
    found = json.loads(out)
    assert found["partial"] is True
    assert found["result"] == "rebuild needed"
    assert [(t["target"], t["checked"]) for t in found["targets"]] == [
        ("cu128", True),
        ("cu126", True),
        ("cu130", False),
    ]
    assert "cannot read" in found["targets"][2]["unreachable"]
    assert "bump: 3 target(s): cu128, cu126, cu130" in err
    assert "bump: target cu130: left out" in err
    assert cli.main(["bump", "--dry-run"]) == 4
    out, _ = capsys.readouterr()
    assert "target cu130: not checked: cannot read" in " ".join(out.split())
    assert "partial" in out


def test_bump_help_documents_the_partial_status(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["bump", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "4 when a target's index was unreachable" in text
    assert "Progress goes to stderr" in text


# run_bump (bump/bump_flow.py) takes a typed BumpRequest, no argparse.Namespace, and hands back a typed outcome:
# what `build.py bump` prints, the PR body it writes and its exit status come from the bump room.


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    bump_offline(monkeypatch)


@pytest.mark.usefixtures("offline")
def test_a_request_gives_the_outcome_the_command_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logged: list[str] = []
    body = tmp_path / "body.md"
    request = BumpRequest(root=ROOT, matrix=None, target=None, dry_run=True, group="minor", pr_body=body)
    outcome = run_bump(request, logged.append)
    assert outcome.exit_status == 4  # partial: cu130's index is down
    assert logged[0] == "3 target(s): cu128, cu126, cu130"
    assert {g.group for g in outcome.groups} == {"minor"}
    assert all(row["group"] == "minor" for row in outcome.document["moved"])  # type: ignore[attr-defined]
    assert body.read_text(encoding="utf-8").strip()
    capsys.readouterr()
    assert cli.main(["bump", "--dry-run", "--json", "--group", "minor"]) == 4
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(outcome.document))


@pytest.mark.usefixtures("offline")
def test_unreadable_advisories_are_one_paragraph(tmp_path: Path) -> None:
    broken = tmp_path / "audit.json"
    broken.write_text("{not json", encoding="utf-8")
    request = BumpRequest(root=ROOT, matrix=None, target="cu12", dry_run=True, advisories=broken)
    with pytest.raises(UserError, match=r"cannot read .*audit.json as JSON") as caught:
        run_bump(request, lambda line: None)
    assert caught.value.fix == "pass the output of `build.py audit --json`"
