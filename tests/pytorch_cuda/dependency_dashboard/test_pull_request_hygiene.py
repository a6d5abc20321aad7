"""PR hygiene as Renovate does it: every bot pull request labelled (dependencies and its kind), and one a person
closed without merging stays closed for that content (its body's marker), while the next version opens a new one.
The group's content comes from a real bump plan (in-memory indexes of
tests/support/bump_indexes.py), lock maintenance's from `lock --upgrade --json`'s shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli
from pytorch_cuda.dependency_dashboard.pull_request_hygiene import closed_by_a_person, content_key, marker
from tests.support.bump_indexes import numpy_held_and_waiting
from tests.support.cli_output import printed
from tests.support.offline_bump import bump_offline

LOCKS = [
    {"path": "images/installer.lock", "created": False, "changes": [], "held": []},
    {"path": "images/sbom-tool.lock", "created": False, "changes": ["  lxml 6.1.3 -> 6.2.1"], "held": []},
]


@pytest.fixture
def offline_bump(monkeypatch: pytest.MonkeyPatch) -> None:
    bump_offline(monkeypatch, numpy_held_and_waiting)


def _write(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def _closed(key: str, *, merged: bool = False) -> list[dict[str, Any]]:
    return [
        {"number": 7, "url": "https://x/pull/7", "body": marker("0123456789abcdef"), "mergedAt": None},
        {"number": 12, "url": "https://x/pull/12", "body": f"the pins\n\n{marker(key)}",
         "mergedAt": "2026-12-01T00:00:00Z" if merged else None},
    ]  # fmt: skip


def test_a_group_pull_request_closed_by_a_person_stays_closed_for_that_version(
    offline_bump: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: bump.yml opened the group's pull request again every week, whatever a person had closed."""
    plan = json.loads(printed(capsys, "bump", "--dry-run", "--json", status=4))
    path = _write(tmp_path, "bump.json", plan)
    first = json.loads(printed(capsys, "dashboard", "--pull-request", "patch", "--plan", path))
    assert first["labels"] == ["dependencies", "bump:patch"]
    assert first["branch"] == "bump/pins-patch"
    assert "python_packages.numpy=2.5.6" in first["carries"]
    assert first["marker"] == f"<!-- bot-content: {first['key']} -->"
    assert (first["open"], first["closed_by"]) == (True, None)  # nothing closed yet
    closed = _write(tmp_path, "closed.json", _closed(first["key"]))
    again = json.loads(printed(capsys, "dashboard", "--pull-request", "patch", "--plan", path, "--closed", closed))
    assert (again["open"], again["closed_by"]) == (False, {"number": 12, "url": "https://x/pull/12"})
    merged = _write(tmp_path, "merged.json", _closed(first["key"], merged=True))
    assert json.loads(printed(capsys, "dashboard", "--pull-request", "patch", "--plan", path, "--closed", merged))[
        "open"
    ]
    # next week numpy 2.5.7: new content, a new key, a new pull request
    plan["moved"] = [{**m, "new": "2.5.7"} if m["pin"] == "python_packages.numpy" else m for m in plan["moved"]]
    later = _write(tmp_path, "later.json", plan)
    nxt = json.loads(printed(capsys, "dashboard", "--pull-request", "patch", "--plan", later, "--closed", closed))
    assert nxt["key"] != first["key"]
    assert (nxt["open"], nxt["closed_by"]) == (True, None)
    major = json.loads(printed(capsys, "dashboard", "--pull-request", "major", "--plan", path))
    assert (major["labels"], major["carries"], major["open"]) == (["dependencies", "bump:major"], [], False)


def test_lock_maintenance_s_pull_request_is_labelled_and_stays_closed_for_the_same_locks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locks = _write(tmp_path, "locks.json", LOCKS)
    found = json.loads(printed(capsys, "dashboard", "--pull-request", "lock-maintenance", "--locks", locks))
    assert found["labels"] == ["dependencies", "lock-maintenance"]
    assert found["carries"] == ["images/sbom-tool.lock:lxml 6.1.3 -> 6.2.1"]
    assert found["key"] == content_key(["images/sbom-tool.lock:lxml 6.1.3 -> 6.2.1"])
    closed = _write(tmp_path, "closed.json", _closed(found["key"]))
    argv = ["dashboard", "--pull-request", "lock-maintenance", "--locks", locks, "--closed", closed]
    assert json.loads(printed(capsys, *argv))["closed_by"] == {"number": 12, "url": "https://x/pull/12"}


def test_a_pull_request_the_bot_closed_itself_is_not_one_a_person_closed() -> None:
    """The bot closes an overtaken pull request and marks its title ` - autoclosed` (Renovate's convention): the
    same content, proposed again after the default branch dropped it, is not held back by that close."""
    key = content_key(["python_packages.numpy=2.5.6"])
    by_bot = [{"number": 3, "url": "u3", "title": "bump (patch): pins - autoclosed", "body": marker(key)}]
    assert closed_by_a_person(key, by_bot) is None
    by_person = [{**by_bot[0], "title": "bump (patch): pins"}]
    assert closed_by_a_person(key, by_person) is not None


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--pull-request", "lock-maintenance", "--plan", "bump.json"], "lock-maintenance with --locks"),
        (["--locks", "locks.json"], "go with --pull-request"),
        (["--pull-request", "nightly", "--plan", "bump.json"], "'nightly' is not a group"),
        (["--pull-request", "lock-maintenance", "--locks", "locks.json", "--closed", "bad.json"], "not a JSON list"),
    ],
)
def test_a_pull_request_question_it_cannot_answer_is_exit_2(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "bump.json", {"result": "current"})
    _write(tmp_path, "locks.json", LOCKS)
    _write(tmp_path, "bad.json", {"number": 1})
    paths = [str(tmp_path / a) if a.endswith(".json") else a for a in argv]
    capsys.readouterr()
    assert cli.main(["dashboard", *paths]) == 2
    assert says in " ".join(capsys.readouterr().err.split())
