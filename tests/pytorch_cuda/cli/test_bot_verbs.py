"""`build.py bot issue` and `bot failed-runs` as bump.yml's dashboard job calls them, against a fake of GitHub's
REST API: the labelled issue opened once then rewritten, and the failures listed (this run's jobs, then each
group whose latest run failed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda import cli
from tests.support.fake_github import REPO, TOKEN, fake_github


def test_the_labelled_issue_is_opened_once_then_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    body = tmp_path / "dashboard.md"
    with fake_github() as fake:
        argv = ["bot", "issue", "--repo", REPO, "--api-url", fake.url, "--label", "dependency-dashboard"]
        argv += ["--title", "Dependency dashboard", "--body-file", str(body)]
        body.write_text("week 1", encoding="utf-8")
        assert cli.main(argv) == 0
        body.write_text("week 2", encoding="utf-8")
        assert cli.main(argv) == 0
        assert capsys.readouterr().out.splitlines() == ["opened #1", "rewrote #1"]
        assert [(i["title"], i["body"]) for i in fake.items.values()] == [("Dependency dashboard", "week 2")]
        assert fake.labels == {"dependency-dashboard"}


def test_the_failures_are_this_runs_jobs_then_the_groups_latest_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    with fake_github() as fake:
        fake.runs = [
            {"display_title": "bump group major", "status": "completed", "conclusion": "failure", "html_url": "r2"},
            {"display_title": "bump group major", "status": "completed", "conclusion": "success", "html_url": "r1"},
        ]
        argv = ["bot", "failed-runs", "--repo", REPO, "--api-url", fake.url, "--run-url", "https://run/9"]
        argv += ["--job", "bump=success", "--job", "closing overtaken pull requests=failure", "--job", "x=skipped"]
        assert cli.main(argv) == 0
        assert capsys.readouterr().out.splitlines() == [
            "closing overtaken pull requests: failed (https://run/9)",
            "group major: its latest run failed (r2)",
        ]
        assert ("GET", "actions/workflows/bump.yml/runs") in fake.calls
