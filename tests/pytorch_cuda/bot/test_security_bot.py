"""security.yml's issues through `build.py bot advisory-issues`, against a fake of GitHub's REST API: one labelled
issue per advisory without a fixed release, none again while one is open, none for a finding that has a fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda import cli
from pytorch_cuda.bot.security_bot import advisory_issue
from tests.support.fake_github import REPO, TOKEN, fake_github

FINDING = {
    "id": "GHSA-xxxx", "package": "jinja2", "version": "3.1.6", "action": "issue", "description": "Sandbox escape.",
    "aliases": ["CVE-2026-1"], "locks": ["images/cu128-runtime/requirements.lock"], "source": "osv",
}  # fmt: skip


def test_one_issue_per_advisory_without_a_fix_and_never_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    fixed = FINDING | {"id": "GHSA-fixed", "action": "pull-request"}
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps({"findings": [FINDING, fixed]}), encoding="utf-8")
    with fake_github() as fake:
        argv = ["bot", "advisory-issues", "--repo", REPO, "--api-url", fake.url, "--audit", str(audit)]
        assert cli.main(argv) == 0
        assert cli.main(argv) == 0  # the next day: it is open
        assert capsys.readouterr().out.splitlines() == ["GHSA-xxxx: opened #1", "GHSA-xxxx: an issue is open"]
        (issue,) = fake.items.values()
        assert (issue["title"], issue["body"]) == advisory_issue(FINDING)
        assert [label["name"] for label in issue["labels"]] == ["security"]
    title, body = advisory_issue(FINDING)
    assert title == "security: GHSA-xxxx in jinja2 3.1.6 (no fixed release)"
    assert "Aliases: CVE-2026-1\nPinned in: images/cu128-runtime/requirements.lock\nSource: osv" in body
