"""The dependency dashboard, rendered from a bump dry run (`bump --dry-run --json` on in-memory indexes, cu130's
unreachable): pending, held back with its rule, waiting for its age, unreachable, failed; its ticked boxes read
back as the next bump's flags, and `--approve` moving a held-back pin past its rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli
from pytorch_cuda.bump.dashboard import DASHBOARD_MARKER, requests
from tests.support.bump_indexes import numpy_held_and_waiting
from tests.support.cli_output import printed
from tests.support.offline_bump import bump_offline


@pytest.fixture
def dry_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    bump_offline(monkeypatch, numpy_held_and_waiting)
    capsys.readouterr()
    assert cli.main(["bump", "--dry-run", "--json"]) == 4  # partial: cu130's index is down
    path = tmp_path / "bump.json"
    path.write_text(capsys.readouterr().out)
    return path


def test_the_dashboard_of_a_dry_run(dry_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--failed", "candidate build: exit 1 (run 7)", "--made-by", "bump.yml run 7"]
    body = printed(capsys, "dashboard", "--plan", str(dry_run), *argv)
    assert body.startswith(DASHBOARD_MARKER)
    assert "Last run: bump.yml run 7; result **rebuild needed**; targets checked: `cu128`, `cu126`." in body
    assert "## Pending (5)" in body
    assert "| `targets.cu128.torch` | 2.9.1 | **2.9.2** | patch | policy ==2.9.* |" in body
    assert "## Held back by the policy (2)" in body
    assert "## Pull requests by group (1)" in body  # patch's; the others are kept: cu130 was not checked
    assert (
        "| patch | `bump/pins-patch` | `targets.cu128.torch`, `targets.cu128.triton`, `targets.cu128.cudnn`, "
        "`targets.cu128.nccl`, `python_packages.numpy` | opened or updated: its branch made again from the default "
        "branch (5 pin(s)) |"
    ) in body
    assert "| minor | `bump/pins-minor` | nothing | left as it is: nothing to move on the targets checked; not " in body
    assert "- `targets.cu128.torch` 2.9.2 -> 2.10.0: held back by `policy ==2.9.*` (a new torch series" in body
    assert (
        "- [ ] `python_packages.numpy` 2.5.6 -> 3.0.0: held back by `compatible (==2.*,>=2.5.5)`; tick to move "
        "it past its rule <!-- bump-dashboard: approve python_packages.numpy -->"
    ) in body
    assert "## Waiting for the release age (`policy: min_release_age`) (1)" in body
    assert "- `python_packages.numpy`: 2.5.9" in body
    assert "## Unreachable (not checked this run) (1)" in body
    assert "- `cu130` (https://download.pytorch.org/whl/cu130): cannot read" in body
    assert "## Failed (1)\n\n- candidate build: exit 1 (run 7)" in body
    assert requests(body).bump_flags() == []  # nothing ticked: nothing asked


def test_ticked_boxes_are_the_next_bumps_flags(
    dry_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = printed(capsys, "dashboard", "--plan", str(dry_run))
    ticked = tmp_path / "body.md"
    ticked.write_text(
        body.replace("- [ ] `python_packages.numpy`", "- [x] `python_packages.numpy`").replace(
            "- [ ] bump these now", "- [X] bump these now"
        )
    )
    asked: dict[str, Any] = json.loads(printed(capsys, "dashboard", "--requests", str(ticked)))
    assert asked == {
        "rebase": False,
        "skip_age": True,
        "approve": ["python_packages.numpy"],
        "flags": ["--ignore-release-age", "--approve=python_packages.numpy"],
        "groups": [],  # no group's box is ticked: one planning run (tests/pytorch_cuda/dependency_dashboard/)
        "runs": [
            {"workflow": "bump.yml", "group": "", "flags": ["--dry-run", *asked["flags"]]},
        ],
    }
    moved = json.loads(printed(capsys, "bump", "--dry-run", "--json", *asked["flags"], status=4))["moved"]
    assert {m["pin"]: m["new"] for m in moved}["python_packages.numpy"] == "3.0.0"
    assert "torch and the pins it drags along" in " ".join(
        _err(capsys, "bump", "--dry-run", "--approve", "targets.cu128.torch").split()
    )


def _err(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert cli.main(list(argv)) == 2
    return capsys.readouterr().err


def test_a_file_that_is_not_a_bumps_json_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.json").write_text('{"a": 1}')
    assert "is not a bump's JSON" in " ".join(_err(capsys, "dashboard", "--plan", str(tmp_path / "x.json")).split())


def test_one_group_per_pull_request(dry_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    approve = ["bump", "--dry-run", "--json", "--approve", "python_packages.numpy"]
    patch = json.loads(printed(capsys, *approve, "--group", "patch", status=4))
    assert {m["pin"]: m["group"] for m in patch["moved"]} == {
        "targets.cu128.torch": "patch",
        "targets.cu128.triton": "patch",  # dragged along by torch: torch's group
        "targets.cu128.cudnn": "patch",
        "targets.cu128.nccl": "patch",
    }
    major = json.loads(printed(capsys, *approve, "--group", "major", status=4))
    assert [(m["pin"], m["new"], m["group"]) for m in major["moved"]] == [("python_packages.numpy", "3.0.0", "major")]
