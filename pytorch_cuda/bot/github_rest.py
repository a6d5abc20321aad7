"""The few GitHub REST calls the bot makes (https://docs.github.com/en/rest): pull requests, their comments and
labels, a labelled issue and a workflow's runs. The token comes from the environment (GH_TOKEN, else GITHUB_TOKEN),
never from the command line; the API's address from GITHUB_API_URL where Actions sets it (GitHub Enterprise)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import requests

from pytorch_cuda.errors import EngineError, UserError

API_URL: Final = "https://api.github.com"
_TIMEOUT_S: Final = 60


@dataclass(frozen=True)
class PullRequest:
    number: int
    url: str
    title: str = ""


class GitHub:
    """One repository's REST API, with a token that may write to it."""

    def __init__(self, repo: str, token: str, api_url: str = API_URL) -> None:
        self.repo = repo
        self.token = token
        self.api_url = api_url.rstrip("/")
        self.session = requests.Session()
        self.session.headers.update(
            {
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {token}",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "pytorch-cuda-bot",
            }
        )

    def server_url(self) -> str:
        """Where the repository is cloned from: github.com for api.github.com, HOST for HOST/api/v3."""
        if self.api_url == API_URL:
            return "https://github.com"
        return self.api_url.removesuffix("/api/v3")

    def _call(
        self, method: str, path: str, body: Mapping[str, Any] | None = None, ok: tuple[int, ...] = (), **params: Any
    ) -> requests.Response:
        url = path if path.startswith("http") else f"{self.api_url}/repos/{self.repo}/{path}"
        try:
            response = self.session.request(method, url, json=body, params=params or None, timeout=_TIMEOUT_S)
        except requests.RequestException as exc:
            raise EngineError(
                cause=f"cannot reach GitHub's API at {self.api_url} ({exc})",
                fix="run the bot where api.github.com (or GITHUB_API_URL) answers",
            ) from exc
        if response.status_code >= 400 and response.status_code not in ok:
            raise EngineError(
                cause=f"GitHub answered {response.status_code} to {method} {url}: {response.text[:300]}",
                fix="check that the token (GH_TOKEN) may write to the repository's contents, pull requests and "
                "issues, and that --repo names the repository",
            )
        return response

    def _pages(self, path: str, **params: Any) -> Iterator[Any]:
        response = self._call("GET", path, per_page=100, **params)
        while True:
            yield from response.json()
            following = response.links.get("next", {}).get("url")
            if not following:
                return
            response = self._call("GET", following)

    def open_pull(self, branch: str) -> PullRequest | None:
        """The open pull request from `branch` of this repository, if any."""
        owner = self.repo.split("/")[0]
        found = self._call("GET", "pulls", state="open", head=f"{owner}:{branch}").json()
        return PullRequest(found[0]["number"], found[0]["html_url"], found[0].get("title", "")) if found else None

    def closed_pulls(self, branch: str) -> list[dict[str, Any]]:
        """The closed pull requests from `branch`, as `gh pr list --state closed --head BRANCH --json
        number,url,title,body,mergedAt` gives them (pull_request_hygiene's closed_by_a_person reads them)."""
        owner = self.repo.split("/")[0]
        return [
            {"number": p["number"], "url": p["html_url"], "title": p.get("title", ""), "body": p.get("body") or "",
             "mergedAt": p.get("merged_at")}
            for p in self._pages("pulls", state="closed", head=f"{owner}:{branch}")
        ]  # fmt: skip

    def open_pulls(self) -> list[dict[str, Any]]:
        """Every open pull request, as `gh pr list --json number,title,url,headRefName` gives it (the dependency
        dashboard's --open-prs)."""
        return [
            {"number": p["number"], "title": p["title"], "url": p["html_url"], "headRefName": p["head"]["ref"]}
            for p in self._pages("pulls", state="open")
        ]

    def create_pull(self, base: str, branch: str, title: str, body: str) -> PullRequest:
        made = self._call("POST", "pulls", {"base": base, "head": branch, "title": title, "body": body}).json()
        return PullRequest(made["number"], made["html_url"], made["title"])

    def edit_pull(self, number: int, **fields: str) -> None:
        """Change a pull request's body, title or state (`state="closed"` closes it)."""
        self._call("PATCH", f"pulls/{number}", fields)

    def comment(self, number: int, body: str) -> None:
        self._call("POST", f"issues/{number}/comments", {"body": body})

    def upsert_comment(self, number: int, marker: str, body: str) -> str:
        """The one comment of the pull request or issue whose body starts with `marker`: updated, else posted."""
        text = body if body.startswith(marker) else f"{marker}\n{body}"
        for comment in self._pages(f"issues/{number}/comments"):
            if str(comment.get("body", "")).startswith(marker):
                self._call("PATCH", f"issues/comments/{comment['id']}", {"body": text})
                return "updated"
        self.comment(number, text)
        return "posted"

    def ensure_label(self, name: str, color: str = "ededed", description: str = "") -> None:
        """Create the label unless the repository has it (GitHub answers 422 then)."""
        self._call("POST", "labels", {"name": name, "color": color, "description": description}, ok=(422,))

    def add_labels(self, number: int, labels: tuple[str, ...]) -> None:
        self._call("POST", f"issues/{number}/labels", {"labels": list(labels)})

    def open_issues(self, label: str) -> list[dict[str, Any]]:
        """The open issues (not pull requests) with `label`."""
        return [i for i in self._pages("issues", state="open", labels=label) if "pull_request" not in i]

    def labelled_issue(self, label: str) -> int | None:
        """The oldest open issue (not pull request) with `label`."""
        return min((int(i["number"]) for i in self.open_issues(label)), default=None)

    def create_issue(self, title: str, body: str, labels: tuple[str, ...]) -> int:
        return int(
            self._call("POST", "issues", {"title": title, "body": body, "labels": list(labels)}).json()["number"]
        )

    def edit_issue(self, number: int, body: str) -> None:
        self._call("PATCH", f"issues/{number}", {"body": body})

    def workflow_runs(self, workflow: str) -> list[dict[str, Any]]:
        """The workflow's latest 100 runs, newest first."""
        return list(self._call("GET", f"actions/workflows/{workflow}/runs", per_page=100).json()["workflow_runs"])


def from_environment(repo: str | None, api_url: str | None) -> GitHub:
    """The repository's API with the token of the environment (GH_TOKEN, else GITHUB_TOKEN)."""
    token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")
    repo = repo or os.environ.get("GITHUB_REPOSITORY")
    if not token or not repo:
        raise UserError(
            cause="the bot needs a token and a repository: " + ("no GH_TOKEN or GITHUB_TOKEN" if not token else "")
            + ("" if repo else (", " if not token else "") + "no --repo or GITHUB_REPOSITORY"),
            fix="set GH_TOKEN to a token that may write to the repository and pass --repo OWNER/NAME",
        )  # fmt: skip
    return GitHub(repo, token, api_url or os.environ.get("GITHUB_API_URL") or API_URL)
