"""The dashboard that acts: a box per group on every render (none before: boxes came only with something pending),
a ticked group box read back as that group's run, and that run's plan bumping the group (the bump on in-memory
indexes of tests/support/bump_indexes.py, cu130 unreachable); the bot's open pull requests of
every kind; a page written when the bump's JSON is missing because its job failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli
from pytorch_cuda.dependency_dashboard.group_boxes import asked_groups, group_box_lines
from pytorch_cuda.dependency_dashboard.page import NO_PLAN
from pytorch_cuda.errors import UserError
from tests.support.bump_indexes import numpy_held_and_waiting
from tests.support.cli_output import printed
from tests.support.offline_bump import bump_offline


@pytest.fixture
def offline_bump(monkeypatch: pytest.MonkeyPatch) -> None:
    bump_offline(monkeypatch, numpy_held_and_waiting)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _tick(body: str, group: str) -> str:
    (line,) = [line for line in body.splitlines() if line.endswith(f"<!-- bump-dashboard: group {group} -->")]
    return body.replace(line, line.replace("- [ ]", "- [x]", 1))


def test_every_render_has_a_box_per_group_even_with_nothing_pending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a current plan (today's render) had no box at all."""
    body = printed(capsys, "dashboard", "--plan", str(_write(tmp_path, "bump.json", '{"result": "current"}')))
    assert "## Run a group now (5)" in body
    for group in ("security", "major", "minor", "patch"):
        assert (
            f"- [ ] **{group}**: run its bump now (`bump/pins-{group}`; nothing to move in the last plan: the run "
            f"checks again) <!-- bump-dashboard: group {group} -->"
        ) in body
    assert "<!-- bump-dashboard: group lock-maintenance -->" in body
    assert json.loads(printed(capsys, "dashboard", "--requests", str(_write(tmp_path, "body.md", body))))["runs"] == []


def test_a_ticked_group_box_makes_the_next_run_bump_that_group(
    offline_bump: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _write(tmp_path, "bump.json", printed(capsys, "bump", "--dry-run", "--json", status=4))
    body = printed(capsys, "dashboard", "--plan", str(plan))
    assert (
        "- [ ] **patch**: run its bump now (`bump/pins-patch`; carries `targets.cu128.torch`, `targets.cu128.triton`, "
        "`targets.cu128.cudnn`, `targets.cu128.nccl`, `python_packages.numpy`) <!-- bump-dashboard: group patch -->"
    ) in body
    asked: dict[str, Any] = json.loads(
        printed(capsys, "dashboard", "--requests", str(_write(tmp_path, "ticked.md", _tick(body, "patch"))))
    )
    assert asked["groups"] == ["patch"]
    (run,) = asked["runs"]
    assert run == {"workflow": "bump.yml", "group": "patch", "flags": ["--group", "patch"]}
    # the group's run (bump.yml with -f group=patch runs `build.py bump --group patch`), here as a dry run
    next_plan = json.loads(printed(capsys, "bump", "--dry-run", "--json", *run["flags"], status=4))
    assert {m["pin"]: m["group"] for m in next_plan["moved"]} == {
        "targets.cu128.torch": "patch",
        "targets.cu128.triton": "patch",
        "targets.cu128.cudnn": "patch",
        "targets.cu128.nccl": "patch",
        "python_packages.numpy": "patch",
    }
    assert [g["action"] for g in next_plan["groups"] if g["group"] == "patch"] == ["update"]


def test_a_group_box_with_the_approve_box_passes_both_to_the_group_run(
    offline_bump: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _write(tmp_path, "bump.json", printed(capsys, "bump", "--dry-run", "--json", status=4))
    body = _tick(printed(capsys, "dashboard", "--plan", str(plan)), "major")
    body = body.replace("- [ ] `python_packages.numpy`", "- [x] `python_packages.numpy`")
    body = _tick(body, "lock-maintenance")
    asked = json.loads(printed(capsys, "dashboard", "--requests", str(_write(tmp_path, "ticked.md", body))))
    assert asked["runs"] == [
        {"workflow": "bump.yml", "group": "major", "flags": ["--group", "major", "--approve=python_packages.numpy"]},
        {"workflow": "lock-maintenance.yml", "group": "lock-maintenance", "flags": []},
    ]  # no planning run: the approval goes with the group that moves it
    major = json.loads(printed(capsys, "bump", "--dry-run", "--json", *asked["runs"][0]["flags"], status=4))
    assert [(m["pin"], m["new"], m["group"]) for m in major["moved"]] == [("python_packages.numpy", "3.0.0", "major")]


def test_the_rebase_box_alone_is_a_planning_run() -> None:
    from pytorch_cuda.dependency_dashboard.page import dashboard_requests

    body = "- [x] rebase: make every group's pull request again <!-- bump-dashboard: rebase -->\n"
    assert dashboard_requests(body)["runs"] == [{"workflow": "bump.yml", "group": "", "flags": ["--dry-run"]}]


def test_a_box_of_no_group_is_refused() -> None:
    with pytest.raises(UserError, match="ticks the box of nightly, which is no group of the bot"):
        asked_groups("- [x] **nightly** <!-- bump-dashboard: group nightly -->")
    assert asked_groups("- [ ] **patch** <!-- bump-dashboard: group patch -->") == ()  # unticked: asks nothing
    assert len(group_box_lines({})) == 5


def test_the_bot_s_open_pull_requests_of_every_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the dashboard showed the groups' branches only, never lock maintenance's or the security lane's."""
    prs = [
        {"number": 12, "title": "bump patch | torch", "url": "https://x/pull/12", "headRefName": "bump/pins-patch"},
        {"number": 9, "title": "lock maintenance", "url": "https://x/pull/9", "headRefName": "bump/lock-maintenance"},
        {"number": 15, "title": "security fixes", "url": "https://x/pull/15", "headRefName": "security/fixes"},
        {"number": 3, "title": "a person's work", "url": "https://x/pull/3", "headRefName": "feature/x"},
    ]
    plan = str(_write(tmp_path, "bump.json", '{"result": "current"}'))
    body = printed(capsys, "dashboard", "--plan", plan, "--open-prs", str(_write(tmp_path, "p.json", json.dumps(prs))))
    assert "## Open pull requests of the bot (3)" in body
    assert "| [#9 lock maintenance](https://x/pull/9) | lock-maintenance | `bump/lock-maintenance` |" in body
    assert "| [#12 bump patch \\| torch](https://x/pull/12) | bump group patch | `bump/pins-patch` |" in body
    assert "| [#15 security fixes](https://x/pull/15) | security fix (audit --fix) | `security/fixes` |" in body
    assert "feature/x" not in body
    bad = _write(tmp_path, "bad.json", '[{"number": 1}]')
    capsys.readouterr()
    assert cli.main(["dashboard", "--plan", plan, "--open-prs", str(bad)]) == 2
    assert "lacks 'title'" in capsys.readouterr().err


def test_a_failed_bump_job_still_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: bump.yml's step had no JSON to render when the bump job failed, and the step failed with it."""
    missing = str(tmp_path / "bump-output" / "bump.json")
    body = printed(capsys, "dashboard", "--plan", missing, "--failed", "bump: failed (run 7)")
    assert f"result **{NO_PLAN}**" in body
    assert "## Failed (1)\n\n- bump: failed (run 7)" in body
    assert "<!-- bump-dashboard: group patch -->" in body  # the boxes still act
    capsys.readouterr()
    assert cli.main(["dashboard", "--plan", missing]) == 2
    assert "no --failed says why" in " ".join(capsys.readouterr().err.split())
