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
    assert job["permissions"] == {
        "contents": "read", "actions": "read", "issues": "write", "pull-requests": "read"
    }  # fmt: skip
    (script,) = [step["run"] for step in job["steps"] if "build.py dashboard" in step.get("run", "")]
    assert "build.py dashboard --plan bump-output/bump.json" in script
    # the bot's open pull requests on the page, listed by the bot's own client (build.py bot open-prs)
    assert script.index("build.py bot open-prs > open-prs.json") < script.index("--open-prs open-prs.json")
    assert "build.py bot failed-runs" in script  # each group's latest run, if it failed (bot/bump_bot.py)
    assert bump["run-name"].startswith("${{ inputs.group && format('bump group {0}', inputs.group)")
    assert 'build.py bot issue --label dependency-dashboard --title "Dependency dashboard"' in script
    assert set(triggers("bump.yml")["workflow_dispatch"]["inputs"]) == {"ignore-release-age", "approve", "group"}
    (run,) = [s["run"] for s in bump["jobs"]["bump"]["steps"] if s.get("id") == "bump"]
    assert '--approve "$APPROVE"' in run


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
    # each run `dashboard --requests` lists: a group box is its group run (tests/pytorch_cuda/dependency_dashboard/)
    assert """jq -r '.runs[] | "\\(.workflow) \\(.group)"' requests.json""" in step["run"]
    assert '-f group="$group" -f ignore-release-age="$skip_age" -f approve="$approve"' in step["run"]
    assert 'gh workflow run "$workflow" --repo "$REPO" --ref "$BRANCH"' in step["run"]  # lock-maintenance.yml
    assert "workflow_dispatch" in triggers("lock-maintenance.yml")


def test_lock_maintenance_is_its_own_schedule_and_pull_request() -> None:
    maintenance = load("lock-maintenance.yml")
    assert triggers("lock-maintenance.yml")["schedule"] != triggers("bump.yml")["schedule"]
    assert maintenance["env"]["BRANCH"] == "bump/lock-maintenance"  # not bump/pins
    script = "\n".join(step.get("run", "") for step in maintenance["jobs"]["maintain"]["steps"])
    assert ".venv/bin/python build.py lock --upgrade --json > locks.json" in script  # every lock; no age override
    assert "--ignore-release-age" not in script
    assert "build.py bump" not in script  # the pins of matrix.yaml stay
    assert 'build.py bot guard origin "$BRANCH"' in script
    assert 'gh pr close "$BRANCH"' in script  # nothing moved: an open one is overtaken


def test_lock_maintenance_closes_through_the_guard_labels_and_leaves_a_closed_one_closed() -> None:
    """Before: it closed its pull request and deleted the branch without the someone-else's-commits guard, labelled
    nothing, and opened again what a person had closed. What it closes itself is titled ` - autoclosed`, which
    `dashboard --pull-request` does not count as a person's close (so it reads the titles too)."""
    maintenance = load("lock-maintenance.yml")
    (run,) = [s["run"] for s in maintenance["jobs"]["maintain"]["steps"] if "gh pr close" in s.get("run", "")]
    check = '.venv/bin/python build.py bot guard --check origin "$BRANCH" "$BASE" "$BOT_EMAIL" > others.txt'
    retitle = '0) gh pr edit "$BRANCH" --repo "$REPO" --title "$TITLE - autoclosed"'  # the bot's close, not a person's
    close = 'gh pr close "$BRANCH" --repo "$REPO" --delete-branch'
    assert run.index(check) < run.index(retitle) < run.index(close) < run.index("3) {")
    assert run.count("--delete-branch") == 1  # the one deletion, after the guard said 0
    assert 'gh pr comment "$BRANCH" --repo "$REPO" --body-file kept.md' in run
    ask = "build.py dashboard --pull-request lock-maintenance --locks locks.json"
    assert run.index("--json number,url,title,body,mergedAt > closed.json") < run.index(ask) < run.index("git switch")
    assert run.index("closed_by=$(jq -r '.closed_by.url // empty' pull-request.json)") < run.index("git switch")
    assert 'echo "$marker"; } > body.md' in run
    assert '--label "$labels"' in run
    assert '--add-label "$labels"' in run
    (app,) = [s for s in maintenance["jobs"]["maintain"]["steps"] if s.get("id") == "app"]
    assert app["with"]["permission-issues"] == "write"  # gh label create


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
    assert "--advisories bump-output/audit.json" in run
    assert '--group "$GROUP"' in run  # empty: the planning run (a dry run; tests/pytorch_cuda/bot/test_bump_bot.py)
    assert '--github-output "$GITHUB_OUTPUT"' in run  # the groups to update and to close ("keep" is neither)
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
    (run,) = [s["run"] for s in job["steps"] if "build.py bot" in s.get("run", "")]
    # the guard's check, then close or comment: tests/pytorch_cuda/bot/test_bot_pull_request.py
    assert 'build.py bot close-groups --groups "$CLOSE" --base "$BASE" --bot-email "$BOT_EMAIL"' in run
    assert "git push" not in run
