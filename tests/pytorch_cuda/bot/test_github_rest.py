"""The bot's GitHub client against a fake of the REST API on 127.0.0.1 (tests/support/fake_github.py), over HTTP:
the calls it makes, the one marked comment found past the first page and updated, a label that exists already,
and GitHub's refusals as one paragraph with the fix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytorch_cuda.bot.github_rest import GitHub, from_environment
from pytorch_cuda.dependency_dashboard.group_boxes import open_pull_requests
from pytorch_cuda.errors import EngineError, UserError
from tests.support.fake_github import REPO, TOKEN, FakeGitHub, fake_github


@pytest.fixture
def api() -> Iterator[tuple[FakeGitHub, GitHub]]:
    with fake_github() as fake:
        yield fake, GitHub(REPO, TOKEN, fake.url)


def test_a_branchs_pull_request_is_found_opened_edited_and_closed(api: tuple[FakeGitHub, GitHub]) -> None:
    fake, github = api
    assert github.open_pull("bump/pins-minor") is None
    made = github.create_pull("main", "bump/pins-minor", "bump (minor)", "body")
    assert github.open_pull("bump/pins-minor") == made
    assert github.open_pull("bump/pins-major") is None
    github.edit_pull(made.number, body="new body")
    assert fake.items[made.number]["body"] == "new body"
    github.edit_pull(made.number, state="closed")
    assert github.open_pull("bump/pins-minor") is None


def test_the_marked_comment_is_updated_not_repeated_even_past_the_first_page(api: tuple[FakeGitHub, GitHub]) -> None:
    fake, github = api
    number = github.create_pull("main", "bump/pins-patch", "t", "b").number
    for index in range(120):  # GitHub pages 100 a page: the marked one is on the second
        github.comment(number, f"chatter {index}")
    assert github.upsert_comment(number, "<!-- gpu -->", "first results") == "posted"
    assert github.upsert_comment(number, "<!-- gpu -->", "second results") == "updated"
    marked = [body for body in fake.comments_on(number) if body.startswith("<!-- gpu -->")]
    assert marked == ["<!-- gpu -->\nsecond results"]
    assert ("GET", f"issues/{number}/comments") in fake.calls


def test_a_label_that_exists_is_no_error_and_the_labelled_issue_is_not_a_pull_request(
    api: tuple[FakeGitHub, GitHub],
) -> None:
    fake, github = api
    github.ensure_label("dependency-dashboard")
    github.ensure_label("dependency-dashboard")  # 422 "already_exists": fine
    pull = github.create_pull("main", "b", "t", "b").number
    github.add_labels(pull, ("dependency-dashboard",))
    assert github.labelled_issue("dependency-dashboard") is None  # a pull request with the label does not count
    issue = github.create_issue("Dependency dashboard", "body", ("dependency-dashboard",))
    assert github.labelled_issue("dependency-dashboard") == issue
    github.edit_issue(issue, "rewritten")
    assert fake.items[issue]["body"] == "rewritten"


def test_githubs_refusal_and_an_unreachable_api_are_one_paragraph_each(api: tuple[FakeGitHub, GitHub]) -> None:
    fake, _ = api
    with pytest.raises(EngineError, match=r"GitHub answered 401 to GET .*/pulls") as refused:
        GitHub(REPO, "wrong-token", fake.url).open_pull("b")
    assert "GH_TOKEN" in refused.value.fix
    with pytest.raises(EngineError, match=r"cannot reach GitHub's API at http://127\.0\.0\.1:9"):
        GitHub(REPO, TOKEN, "http://127.0.0.1:9").open_pull("b")


def test_the_token_comes_from_the_environment_never_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    with pytest.raises(UserError, match="no GH_TOKEN or GITHUB_TOKEN, no --repo or GITHUB_REPOSITORY"):
        from_environment(None, None)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    github = from_environment(None, "https://ghe.example/api/v3")
    assert (github.repo, github.token, github.server_url()) == (REPO, "t", "https://ghe.example")


def test_the_open_pull_requests_are_listed_as_the_dashboard_reads_them(
    api: tuple[FakeGitHub, GitHub], tmp_path: Path
) -> None:
    """Every page of them (GitHub gives 100 a page), closed ones left out, in gh's shape, which the dashboard's
    --open-prs reader takes."""
    _, github = api
    made = [github.create_pull("main", f"bump/b{i}", f"bump {i}", "body") for i in range(105)]
    github.edit_pull(made[0].number, state="closed")
    listed = github.open_pulls()
    assert len(listed) == 104
    assert listed[0] == {"number": made[1].number, "title": "bump 1", "url": made[1].url, "headRefName": "bump/b1"}
    path = tmp_path / "open-prs.json"
    path.write_text(json.dumps(listed), encoding="utf-8")
    read = open_pull_requests(json.loads(path.read_text(encoding="utf-8")))
    assert [pr.branch for pr in read][:2] == ["bump/b1", "bump/b2"]
