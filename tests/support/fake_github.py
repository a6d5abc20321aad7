"""A fake of GitHub's REST API on 127.0.0.1, at the HTTP boundary: the bot (pytorch_cuda/bot/github_rest.py) talks
to it over real HTTP with its real client, as it would to api.github.com. It keeps what the bot touches in memory:
pull requests and issues (one numbering, as GitHub's), their comments (paged as GitHub pages them, with a Link
header), labels and a workflow's runs, answers 401 without the token, 422 for a label that exists, 404 else, and
records every call."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "test-token"
REPO = "octo/pytorch-cuda"


@dataclass
class FakeGitHub:
    url: str = ""
    items: dict[int, dict[str, Any]] = field(default_factory=dict)  # pull requests and issues, by number
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)  # by id: issue, body
    labels: set[str] = field(default_factory=set)
    runs: list[dict[str, Any]] = field(default_factory=list)  # newest first
    calls: list[tuple[str, str]] = field(default_factory=list)  # (method, path without the repo prefix)

    def pulls(self, state: str = "open") -> list[dict[str, Any]]:
        return [i for i in self.items.values() if "head" in i and i["state"] == state]

    def comments_on(self, number: int) -> list[str]:
        return [c["body"] for c in self.comments.values() if c["issue"] == number]

    def add(self, **item: Any) -> int:
        number = len(self.items) + 1
        self.items[number] = {"number": number, "state": "open", "labels": [], "html_url": f"pr/{number}", **item}
        return number

    def answer(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        self.calls.append((method, path))
        parts = path.split("/")
        if (method, path) == ("GET", "pulls"):  # head as GitHub gives it: an object with the branch as "ref"
            listed = [{**p, "head": {"ref": p["head"]}} for p in self.pulls(query.get("state", "open"))]
            if "head" not in query:
                return self._page(listed, path, query)
            owner, _, branch = query["head"].partition(":")
            return 200, [p for p in listed if p["head"]["ref"] == branch and owner == "octo"], {}
        if (method, path) == ("POST", "pulls"):
            number = self.add(head=body["head"], base=body["base"], title=body["title"], body=body["body"])
            return 201, self.items[number], {}
        if method == "PATCH" and parts[0] in ("pulls", "issues") and len(parts) == 2:
            self.items[int(parts[1])].update(body)
            return 200, self.items[int(parts[1])], {}
        if parts[0] == "issues" and len(parts) == 3 and parts[2] == "comments":
            if method == "POST":
                key = 1000 + len(self.comments)
                self.comments[key] = {"id": key, "issue": int(parts[1]), "body": body["body"]}
                return 201, self.comments[key], {}
            return self._page([c for c in self.comments.values() if c["issue"] == int(parts[1])], path, query)
        if (method, parts[:2]) == ("PATCH", ["issues", "comments"]):
            self.comments[int(parts[2])]["body"] = body["body"]
            return 200, self.comments[int(parts[2])], {}
        if (method, path) == ("POST", "labels"):
            if body["name"] in self.labels:
                return 422, {"message": "Validation Failed", "errors": [{"code": "already_exists"}]}, {}
            self.labels.add(body["name"])
            return 201, {"name": body["name"]}, {}
        if method == "POST" and parts[0] == "issues" and parts[2:] == ["labels"]:
            self.items[int(parts[1])]["labels"] += [{"name": n} for n in body["labels"]]
            return 200, self.items[int(parts[1])]["labels"], {}
        if (method, path) == ("GET", "issues"):
            wanted = query.get("labels")
            found = [
                i | ({"pull_request": {}} if "head" in i else {})
                for i in self.items.values()
                if i["state"] == query.get("state", "open") and any(lb["name"] == wanted for lb in i["labels"])
            ]
            return self._page(found, path, query)
        if (method, path) == ("POST", "issues"):
            number = self.add(title=body["title"], body=body["body"], labels=[{"name": n} for n in body["labels"]])
            return 201, self.items[number], {}
        if method == "GET" and parts[:2] == ["actions", "workflows"] and parts[3:] == ["runs"]:
            return 200, {"total_count": len(self.runs), "workflow_runs": self.runs}, {}
        return 404, {"message": "Not Found"}, {}

    def _page(self, rows: list[Any], path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        size, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        headers = {}
        if page * size < len(rows):
            following = f"{self.url}/repos/{REPO}/{path}?per_page={size}&page={page + 1}"
            headers["Link"] = f'<{following}>; rel="next"'
        return 200, rows[(page - 1) * size : page * size], headers


def _handler(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            split = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(split.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            prefix = f"/repos/{REPO}/"
            headers: dict[str, str] = {}
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                status, answer = 401, {"message": "Bad credentials"}
            elif not split.path.startswith(prefix):
                status, answer = 404, {"message": "Not Found"}
            else:
                status, answer, headers = fake.answer(self.command, split.path[len(prefix) :], query, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            for key, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def do_PATCH(self) -> None:
            self._serve()

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def fake_github() -> Iterator[FakeGitHub]:
    """A fake GitHub API on a free port of 127.0.0.1 for the block's length; `.url` is its address."""
    fake = FakeGitHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
