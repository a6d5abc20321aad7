"""bump.yml's steps in Python (pytorch_cuda/bot/bump_bot.py): the planning run and a group run on a git checkout
of the repository with in-memory indexes, a group's pull request and the closing of overtaken groups through
`build.py bot` against a local git remote and a fake of GitHub's REST API, the GPU fleet's one comment and the
dashboard's failed group runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda import cli
from pytorch_cuda.bot import bump_bot
from pytorch_cuda.dependency_dashboard.pull_request_hygiene import content_key, marker
from tests.support.fake_github import REPO, TOKEN, fake_github
from tests.support.git_remote import bare_remote, git, human_pushes, matrix_checkout
from tests.support.offline_bump import bump_offline

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git checkout of matrix.yaml, templates/ and images/, bumped offline (cu130's index down: partial)."""
    root = matrix_checkout(tmp_path)
    bump_offline(monkeypatch)
    return root


def test_the_planning_run_writes_nothing_and_names_each_group_to_start(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "bump-output"
    done = bump_bot.plan_run(checkout, out, None, False, (), tmp_path / "no-audit.json", lambda line: None)
    assert (done.rebuild, done.unreachable, done.exit_status) == (True, ("cu130",), 4)
    assert done.update == ("patch",)  # torch 2.9.2 and numpy 2.5.6; 2.10.0 is held back by `torch: "2.9.*"`
    assert done.close == ()  # a partial run closes nothing: a left-out target may still need the group
    assert (out / "pins.patch").read_text() == ""  # a dry run
    assert json.loads((out / "bump.json").read_text())["dry_run"] is True
    assert "numpy" in (out / "body.md").read_text()
    assert done.outputs()["rebuild"] == "true"


def test_a_group_run_writes_its_moves_into_the_patch(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "bump-output"
    done = bump_bot.plan_run(checkout, out, "patch", False, (), None, lambda line: None)
    patch = (out / "pins.patch").read_text()
    assert done.exit_status == 4
    assert "diff --git a/matrix.yaml b/matrix.yaml" in patch  # the pins, and what re-rendering made of them:
    assert "-ARG PARENT_IMAGE=pytorch-cuda:2.9.1-cuda12.8" in patch
    assert "+numpy==2.5.6" in patch
    assert "2.10.0" not in patch  # held back by the policy, in no group
    assert json.loads((out / "bump.json").read_text())["dry_run"] is False


def test_the_group_pull_request_and_closing_through_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    remote, clone = bare_remote(tmp_path)
    source = tmp_path / "bump-output"
    source.mkdir()
    (clone / "matrix.yaml").write_text("numpy: 2.5.5\n", encoding="utf-8")
    git(clone, "add", "matrix.yaml")
    git(clone, "commit", "-qm", "matrix")
    git(clone, "push", "-q", "origin", "main")
    (clone / "matrix.yaml").write_text("numpy: 2.5.6\n", encoding="utf-8")
    (source / "pins.patch").write_text(git(clone, "diff") + "\n", encoding="utf-8")
    git(clone, "checkout", "-q", "--", "matrix.yaml")
    (source / "body.md").write_text("numpy 2.5.5 -> 2.5.6", encoding="utf-8")
    (source / "bump.json").write_text(json.dumps(_moves("2.5.6")), encoding="utf-8")
    outputs = tmp_path / "github-output"
    monkeypatch.chdir(clone)
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    with fake_github() as fake:
        where = ["--repo", REPO, "--api-url", fake.url, "--remote", str(remote), "--base", "main"]
        image = "ghcr.io/octo/pytorch-cuda@sha256:" + "a" * 64
        argv = ["bot", "open-group", "--group", "patch", "--image", image, "--from", str(source)]
        assert cli.main([*argv, *where, "--github-output", str(outputs)]) == 0
        assert outputs.read_text() == "number=1\naction=created\n"
        (pull,) = fake.pulls()
        assert pull["title"] == "bump (patch): the patch group's newest pins within the policy"
        assert pull["body"].startswith("numpy 2.5.5 -> 2.5.6\n\nThe cu12 candidate `" + image)
        assert "+numpy: 2.5.6" in pull["body"]
        assert pull["body"].endswith(marker(content_key(["python_packages.numpy=2.5.6"])) + "\n")
        assert [label["name"] for label in pull["labels"]] == ["dependencies", "bump:patch"]
        assert git(remote, "show", "bump/pins-patch:matrix.yaml") == "numpy: 2.5.6"
        human_pushes(tmp_path, remote, "bump/pins-patch", "by-hand")
        git(clone, "switch", "-q", "main")
        assert cli.main([*argv, *where, "--github-output", str(outputs)]) == 0  # next week: someone else's commit
        assert outputs.read_text().splitlines()[2:] == ["number=", "action=blocked"]  # so no GPU comment on it
        git(clone, "switch", "-q", "main")
        capsys.readouterr()
        assert cli.main(["bot", "close-groups", "--groups", "patch minor", *where]) == 0
        assert capsys.readouterr().out.splitlines() == ["group patch: kept", "group minor: absent"]
        assert fake.items[1]["state"] == "open"
        assert "which the bot does not throw away" in fake.comments_on(1)[-1]


def _moves(numpy: str) -> dict[str, object]:
    """The part of a group run's bump.json that names its moves."""
    return {"moved": [{"pin": "python_packages.numpy", "old": "2.5.5", "new": numpy, "group": "patch"}]}


def test_a_group_pull_request_a_person_closed_stays_closed_for_that_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: `bot open-group` opened the group's pull request again every week, whatever a person had closed,
    and labelled none. Now its body carries the key of the group's moves, and a person's close holds for them."""
    remote, clone = bare_remote(tmp_path)
    git(clone, "switch", "-q", "main")
    source = tmp_path / "bump-output"
    source.mkdir()

    def week(numpy: str) -> int:  # one group run: the planning step's output, then `bot open-group`
        (clone / "matrix.yaml").write_text(f"numpy: {numpy}\n", encoding="utf-8")
        (source / "pins.patch").write_text("", encoding="utf-8")  # the run's change is in the work tree already
        (source / "body.md").write_text(f"numpy 2.5.5 -> {numpy}", encoding="utf-8")
        (source / "bump.json").write_text(json.dumps(_moves(numpy)), encoding="utf-8")
        capsys.readouterr()
        argv = ["bot", "open-group", "--group", "patch", "--image", "ghcr.io/o/p@sha256:" + "b" * 64]
        status = cli.main([*argv, "--from", str(source), *where, "--github-output", str(outputs)])
        git(clone, "switch", "-q", "main")
        git(clone, "checkout", "-q", "--", ".")
        return status

    outputs = tmp_path / "github-output"
    monkeypatch.chdir(clone)
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    with fake_github() as fake:
        where = ["--repo", REPO, "--api-url", fake.url, "--remote", str(remote), "--base", "main"]
        assert week("2.5.6") == 0
        assert capsys.readouterr().out.splitlines()[-1] == "pull request: created #1"
        first = git(remote, "rev-parse", "bump/pins-patch")
        fake.items[1]["state"] = "closed"  # a person closes it without merging
        assert week("2.5.6") == 0  # next week, the same moves
        assert capsys.readouterr().out.splitlines() == [
            "::notice::#1, closed by a person, carried this same content: not opened again",
            "pull request: declined #1",
        ]
        assert outputs.read_text().splitlines()[-2:] == ["number=", "action=declined"]  # no GPU comment
        assert [p["number"] for p in fake.pulls("closed")] == [1]
        assert fake.pulls() == []
        assert git(remote, "rev-parse", "bump/pins-patch") == first  # nothing pushed either
        assert week("2.5.7") == 0  # the next version: new content, a new pull request
        (pull,) = fake.pulls()
        assert (pull["number"], pull["head"]) == (2, "bump/pins-patch")
        assert pull["body"].endswith(marker(content_key(["python_packages.numpy=2.5.7"])) + "\n")
        git(clone, "push", "-q", str(remote), f"{git(remote, 'rev-parse', 'bump/pins-patch')}:refs/heads/main")
        capsys.readouterr()
        assert cli.main(["bot", "close-groups", "--groups", "patch", *where]) == 0  # the default branch overtook it
        assert fake.items[2]["state"] == "closed"
        assert fake.items[2]["title"].endswith(" - autoclosed")  # closed by the bot, not by a person:
        git(remote, "update-ref", "refs/heads/main", git(remote, "rev-parse", "main~1"))  # main reverts it
        git(clone, "fetch", "-q", str(remote), "main")
        git(clone, "reset", "-q", "--hard", "FETCH_HEAD")
        assert week("2.5.7") == 0  # so the same moves are proposed again
        assert [p["number"] for p in fake.pulls()] == [3]


def test_open_group_without_the_plan_s_json_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The key of the group's moves comes from bump.json: a --from folder without it is refused in one paragraph."""
    remote, clone = bare_remote(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "body.md").write_text("b", encoding="utf-8")
    monkeypatch.chdir(clone)
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    argv = ["bot", "open-group", "--group", "patch", "--image", "i", "--from", str(tmp_path / "out"), "--base", "main"]
    assert cli.main([*argv, "--repo", REPO, "--api-url", "http://127.0.0.1:9", "--remote", str(remote)]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "bump.json (No such file or directory)" in said
    assert "Fix: pass --from the folder that `build.py bot plan --out DIR --group GROUP` wrote" in said


def test_the_gpu_comment_has_each_runner_or_says_none_came(tmp_path: Path) -> None:
    (tmp_path / "h100").mkdir()
    (tmp_path / "h100" / "diff.md").write_text("# Precision diff\n\nbf16: 1.9x -> 1.8x\n", encoding="utf-8")
    text = bump_bot.gpu_comment(tmp_path, "success", "evidence/reports/h200/results.json", "https://a/1")
    assert text.startswith(bump_bot.GPU_MARKER + "\n## GPU fleet on the candidate (gpu jobs: success)")
    assert "<details open><summary>h100</summary>\n\n## Precision diff\n\nbf16: 1.9x -> 1.8x\n\n</details>" in text
    assert text.endswith("[bump-report-diff](https://a/1)\n")
    empty = bump_bot.gpu_comment(tmp_path / "none", "failure", "old.json", None)
    assert "**No GPU job left a results.json**" in empty
    assert "bump-report-diff" not in empty


def test_the_dashboard_lists_each_group_whose_latest_run_failed() -> None:
    runs: list[dict[str, object]] = [
        {"display_title": "bump group minor", "status": "completed", "conclusion": "success", "html_url": "u4"},
        {"display_title": "bump group patch", "status": "in_progress", "conclusion": None, "html_url": "u3"},
        {"display_title": "bump group patch", "status": "completed", "conclusion": "failure", "html_url": "u2"},
        {"display_title": "bump group minor", "status": "completed", "conclusion": "failure", "html_url": "u1"},
        {"display_title": "bump - plan the groups", "status": "completed", "conclusion": "failure", "html_url": "u0"},
    ]
    assert bump_bot.failed_group_runs(runs) == ["group patch: its latest run failed (u2)"]


def test_the_plan_command_writes_the_jobs_outputs_and_the_summary(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`build.py bot plan` as bump.yml calls it on a schedule: the inputs empty, the outputs for the next jobs."""
    outputs, summary, out = tmp_path / "github-output", tmp_path / "summary.md", tmp_path / "bump-output"
    argv = ["bot", "plan", "--root", str(checkout), "--out", str(out), "--group", "", "--ignore-release-age", ""]
    argv += ["--approve", "", "--github-output", str(outputs), "--summary", str(summary)]
    assert cli.main([*argv, "--advisories", str(tmp_path / "absent.json")]) == 0  # exit 4 of bump is an output here
    assert outputs.read_text().splitlines() == ["rebuild=true", "update=patch", "close="]
    assert summary.read_text() == (out / "body.md").read_text()
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "::warning::partial bump: not checked (index unreachable): cu130"
