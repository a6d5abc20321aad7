"""The bot's workflows beside the bump itself: every bump.yml run rewrites the dependency dashboard (one labelled
issue) from the bump's JSON (with what failed); dashboard.yml starts bump.yml from ticked boxes only for an editor
with write access, reading the issue's body as data; lock maintenance runs on its own schedule, separate from the
pin bumps; a bot pull request that main has overtaken is closed."""

from __future__ import annotations

from typing import Any

from tests.support.workflow_files import load


def triggers(name: str) -> Any:
    """A workflow's `on:` (YAML 1.1 reads the key `on` as True)."""
    return load(name).get(True)  # type: ignore[call-overload]


def test_every_bump_run_rewrites_the_one_labelled_issue() -> None:
    bump = load("bump.yml")
    job = bump["jobs"]["dashboard"]
    assert job["if"] == "${{ !cancelled() && !inputs.group }}"  # a failed job is listed, not hidden
    assert set(job["needs"]) == {"bump", "close-overtaken", "groups"}  # the planning run's
    assert job["permissions"] == {"contents": "read", "actions": "read", "issues": "write"}
    (script,) = [step["run"] for step in job["steps"] if "build.py dashboard" in step.get("run", "")]
    assert "build.py dashboard --plan bump-output/bump.json" in script
    assert 'gh run list --repo "$REPO" --workflow bump.yml' in script  # each group's latest run, if it failed
    assert 'startswith("bump group ")' in script
    assert bump["run-name"].startswith("${{ inputs.group && format('bump group {0}', inputs.group)")
    assert '--label "$label" --state open' in script
    assert 'gh issue edit "$number"' in script
    assert "gh issue create" in script  # the first run opens it
    assert set(triggers("bump.yml")["workflow_dispatch"]["inputs"]) == {"ignore-release-age", "approve", "group"}
    (run,) = [s["run"] for s in bump["jobs"]["bump"]["steps"] if s.get("id") == "bump"]
    assert 'flags+=(--approve "$pin")' in run


def test_ticked_boxes_start_a_bump_only_for_a_writer_and_the_body_is_data() -> None:
    dashboard = load("dashboard.yml")
    assert triggers("dashboard.yml") == {"issues": {"types": ["edited"]}}
    job = dashboard["jobs"]["requests"]
    assert "dependency-dashboard" in job["if"]
    assert "github.event.sender.type == 'User'" in job["if"]  # the bot's own rewrite starts nothing
    assert job["permissions"] == {"contents": "read", "actions": "write"}
    (step,) = [s for s in job["steps"] if "build.py dashboard --requests" in s.get("run", "")]
    assert step["env"]["BODY"] == "${{ github.event.issue.body }}"
    assert "github.event" not in step["run"]  # never pasted into the script
    assert "admin | maintain | write) ;;" in step["run"]
    assert "gh workflow run bump.yml" in step["run"]


def test_lock_maintenance_is_its_own_schedule_and_pull_request() -> None:
    maintenance = load("lock-maintenance.yml")
    assert triggers("lock-maintenance.yml")["schedule"] != triggers("bump.yml")["schedule"]
    assert maintenance["env"]["BRANCH"] == "bump/lock-maintenance"  # not bump/pins
    script = "\n".join(step.get("run", "") for step in maintenance["jobs"]["maintain"]["steps"])
    assert ".venv/bin/python build.py lock --json > locks.json" in script  # every lock; no --ignore-release-age
    assert "--ignore-release-age" not in script
    assert "build.py bump" not in script  # the pins of matrix.yaml stay
    assert 'scripts/push-bot-branch.sh origin "$BRANCH"' in script
    assert 'gh pr close "$BRANCH"' in script  # nothing moved: an open one is overtaken


def test_the_weekly_run_plans_one_pull_request_per_group() -> None:
    bump = load("bump.yml")
    assert bump["concurrency"]["group"] == "bump-${{ inputs.group || 'plan' }}"  # no group run cancels another
    group = triggers("bump.yml")["workflow_dispatch"]["inputs"]["group"]
    assert group["options"] == ["", "security", "major", "minor", "patch"]
    jobs = bump["jobs"]
    steps = jobs["bump"]["steps"]
    audit = next(s["run"] for s in steps if "build.py audit" in s.get("run", ""))
    assert ".venv/bin/python build.py audit --json > bump-output/audit.json" in audit
    run = next(s["run"] for s in steps if s.get("id") == "bump")
    assert "flags+=(--advisories bump-output/audit.json)" in run
    assert 'if [ -n "$GROUP" ]; then flags+=(--group "$GROUP"); else flags+=(--dry-run); fi' in run
    assert '.groups[] | select(.action == "update") | .group' in run
    assert '.groups[] | select(.action == "close") | .group' in run  # "keep" (a partial run) is neither
    assert set(jobs["bump"]["outputs"]) == {"rebuild", "update", "close"}
    start = jobs["groups"]
    assert start["if"] == "${{ !inputs.group && needs.bump.outputs.update != '' }}"
    assert start["permissions"] == {"actions": "write"}
    (dispatch,) = [s["run"] for s in start["steps"]]
    assert '-f group="$group" -f ignore-release-age="$IGNORE_AGE" -f approve="$APPROVE"' in dispatch
    assert start["steps"][0]["env"]["IGNORE_AGE"] == "${{ inputs.ignore-release-age || false }}"


def test_an_overtaken_group_pull_request_is_closed_unless_someone_else_pushed_to_it() -> None:
    job = load("bump.yml")["jobs"]["close-overtaken"]
    assert job["if"] == "${{ !inputs.group && needs.bump.outputs.close != '' }}"
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
    (run,) = [s["run"] for s in job["steps"] if "run" in s]
    assert 'branch="bump/pins-$group"' in run
    check = 'scripts/push-bot-branch.sh --check origin "$branch" "$BASE" "$BOT_EMAIL" > others.txt'
    assert check in run  # tests/scripts/test_bump_branch_guard.py
    assert run.index(check) < run.index('0) gh pr close "$branch"') < run.index("3) {")
    assert 'gh pr comment "$branch" --repo "$REPO" --body-file kept.md' in run
    assert "git push" not in run
