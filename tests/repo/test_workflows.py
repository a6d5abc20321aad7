"""The habits of the workflows: least privilege, cancelled PR runs, bash with pipefail, no secret in a script,
the digest that was tested is the one that ships."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.workflow_files import ROOT, WORKFLOWS, load, scripts, steps


def test_there_are_the_nine_workflows() -> None:
    names = ["bump.yml", "dashboard.yml", "gpu-conformance.yml", "lock-maintenance.yml", "nightly-gpu.yml", "pr.yml"]
    names += ["release.yml", "root-expiry.yml", "security.yml"]
    assert [p.name for p in WORKFLOWS] == names


def test_root_expiry_is_thin_scheduled_and_only_its_reminder_writes_issues() -> None:
    """Issue 51: a scheduled check of the TUF root's expiry (build.py release root-status, 30 days ahead) that
    opens an issue; the job that runs the checkout's code can write nothing."""
    workflow = load("root-expiry.yml")
    triggers = next(value for key, value in workflow.items() if key in ("on", True))  # PyYAML: bare `on` is True
    assert "schedule" in triggers
    check, reminder = workflow["jobs"]["check"], workflow["jobs"]["reminder"]
    assert check["permissions"] == {"contents": "read"}
    assert reminder["permissions"] == {"issues": "write"}
    assert reminder["needs"] == "check"
    assert reminder["if"] == "needs.check.outputs.expiring == 'true'"
    assert "build.py release root-status --warn-days 30" in " ".join(s["run"] for s in check["steps"] if "run" in s)
    assert not any("uses" in step or "build.py" in step.get("run", "") for step in reminder["steps"])


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_permission_unless_a_job_asks_for_it(path: Path) -> None:
    workflow = load(path.name)
    assert workflow["permissions"] == {}
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name} states no permissions"
        assert "write-all" not in str(job["permissions"])


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_scripts_run_in_bash_with_pipefail_and_read_no_secret(path: Path) -> None:
    workflow = load(path.name)
    if scripts(workflow):
        assert workflow["defaults"]["run"]["shell"] == "bash"  # GitHub runs `bash -eo pipefail {0}`
    for script in scripts(workflow):
        assert "secrets." not in script, f"{path.name}: a secret pasted into a script; pass it through env:"
        if "ghcr.io/${" in script:
            assert "ghcr.io/${OWNER,,}" in script  # GHCR wants the owner in lower case


def test_a_new_push_cancels_the_pull_requests_older_run() -> None:
    concurrency = load("pr.yml")["concurrency"]
    assert "github.event.pull_request.number" in concurrency["group"]
    assert concurrency["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    for name in ("nightly-gpu.yml", "release.yml"):
        assert load(name)["concurrency"]["cancel-in-progress"] is False  # never kill GPU jobs or a release half-way


def test_pr_runs_the_readme_test_command() -> None:
    runs = scripts(load("pr.yml"))
    assert "sudo .ci/run" in runs  # scripts/setup-tests.sh && scripts/test.sh
    assert "scripts/test.sh --unit" in runs


def test_zizmor_runs_online_in_pr_and_offline_in_lint_ci() -> None:
    steps = load("pr.yml")["jobs"]["unit"]["steps"]
    (online,) = [s for s in steps if "zizmor" in s.get("run", "")]
    assert "--offline" not in online["run"]
    assert online["env"] == {"GH_TOKEN": "${{ github.token }}"}
    assert "zizmor --offline" in (ROOT / "scripts" / "lint-ci.sh").read_text()


def test_build_once_push_by_digest_then_test_that_digest() -> None:
    jobs = load("gpu-conformance.yml")["jobs"]
    assert jobs["build"]["runs-on"] == "${{ matrix.labels }}"  # fleet.yaml's builder
    for step in jobs["build"]["steps"]:
        if "sudo" in step.get("run", ""):  # never on a self-hosted builder
            assert step["if"] == "runner.environment == 'github-hosted'"
    build = "\n".join(s.get("run", "") for s in jobs["build"]["steps"])
    assert "push --target" in build  # no release tag moves before the GPU jobs pass: the candidate alone
    assert "--candidate \\\n" in build
    assert "--candidate-file candidate.txt --registry" in build  # the variant's candidate, by digest
    assert "| tee build.json" in build
    assert "build.py content-hash" in build
    gpu = jobs["gpu"]
    assert gpu["needs"] == ["matrix", "build"]
    # fleet.yaml's runner group and labels, through `build.py ci-matrix`: the group's allow-list names this file
    assert gpu["runs-on"] == {"group": "${{ matrix.group }}", "labels": "${{ matrix.labels }}"}
    run = "\n".join(s.get("run", "") for s in gpu["steps"])
    for flag in ("--gpus all", "--ipc=host", "-e NCCL_NVLS_ENABLE=0", "-e CONFORMANCE_OUT=/out", '"${require[@]}"'):
        assert flag in run
    assert 'docker pull "$IMAGE"' in run
    assert "build.py report out/results.json --out out/report" in run
    assert "$GITHUB_STEP_SUMMARY" in run
    merge = "\n".join(s.get("run", "") for s in jobs["merge"]["steps"])
    assert 'build.py report "${files[@]}" --out merged' in merge


def test_skip_what_passed_is_keyed_on_content_and_runner() -> None:
    gpu = load("gpu-conformance.yml")["jobs"]["gpu"]
    keys = [s["with"]["key"] for s in gpu["steps"] if "actions/cache/" in s.get("uses", "")]
    assert len(keys) == 2
    assert set(keys) == {"conformance-passed-${{ matrix.runner }}-${{ steps.candidate.outputs.hash }}"}
    restore = next(s for s in gpu["steps"] if "actions/cache/restore" in s.get("uses", ""))
    assert restore["if"] == "inputs.skip-passed"
    nightly = load("nightly-gpu.yml")
    assert nightly["jobs"]["conformance"]["with"]["skip-passed"].startswith("${{ github.event_name == 'schedule'")
    assert load("release.yml")["jobs"]["conformance"]["with"]["skip-passed"] is False


def test_the_release_checks_the_tag_first_and_moves_aliases_last_behind_its_environment() -> None:
    jobs = load("release.yml")["jobs"]
    assert any("build.py check-tag" in s.get("run", "") for s in jobs["tag"]["steps"])
    assert jobs["conformance"]["needs"] == "tag"
    assert jobs["conformance"]["uses"] == "./.github/workflows/gpu-conformance.yml"
    publish = jobs["publish"]
    assert publish["needs"] == "conformance"
    assert publish["environment"] == "release"
    run = "\n".join(s.get("run", "") for s in publish["steps"])
    # signed and attested BEFORE promotion (issue 39: no unsigned window); promoted by digest inside the registry,
    # never pulled and pushed again; the tags bound in the index (release key + timestamp key) BEFORE they move
    # (issue 51: promote refuses a tag the index does not bind), then verified
    assert 'build.py release promote "$candidate"' in run
    assert "docker push" not in run
    assert "docker pull" not in run
    first_sign = run.index("release sign")
    bind = run.index('--timestamp-key "$RELEASE_TIMESTAMP_SIGNER_URI"')
    assert first_sign < bind < run.index("release promote") < run.index("release verify")
    names = [s.get("name", "") + s.get("uses", "") for s in publish["steps"]]
    promote_at = next(i for i, n in enumerate(names) if n.startswith("promote by digest"))
    assert all(i < promote_at for i, n in enumerate(names) if n.startswith(("actions/attest-", "sign and attest")))
    assert publish["concurrency"] == {"group": "release-index", "cancel-in-progress": False}
    uses = [s.get("uses", "") for s in publish["steps"]]
    assert any(u.startswith("actions/attest-build-provenance@") for u in uses)
    assert any(u.startswith("actions/attest-sbom@") for u in uses)
    # the keyless provenance that verify and promote require (release-policy.yaml keyless_builder): of the tested
    # digest, pushed as its referrer, before any tag moves
    provenance = next(i for i, u in enumerate(uses) if u.startswith("actions/attest-build-provenance@"))
    assert provenance < promote_at
    given = publish["steps"][provenance]["with"]
    assert given["push-to-registry"] is True
    assert given["subject-digest"] == "${{ steps.candidate.outputs.digest }}"
    assert publish["permissions"]["id-token"] == "write"
    assert "$GITHUB_STEP_SUMMARY" in run


def test_the_release_signs_with_its_key_or_fails_and_never_leaves_the_key_behind() -> None:
    publish = load("release.yml")["jobs"]["publish"]
    steps = [s for s in publish["steps"] if "release sign" in s.get("run", "")]
    assert len(steps) == 2  # sign the digest, then bind the tags with the timestamp key: both before promote
    for step in steps:
        assert "if" not in step  # no key is a failure, not a skipped step
        run = step["run"]
        assert run.index("source scripts/release-key.sh") < run.index('--key "$key"')  # test_release_key.py
        assert "--require-pinned-base" in run  # no digest: on matrix.yaml's base, no signature
        assert '--source-ref "$GITHUB_REF" --commit "$GITHUB_SHA"' in run  # the provenance's real parameters
        assert step["env"]["RELEASE_SIGNER_URI"] == "${{ vars.RELEASE_SIGNER_URI }}"  # a KMS/HSM key, when set
    assert '--timestamp-key "$RELEASE_TIMESTAMP_SIGNER_URI"' in steps[1]["run"]  # the split setup (issue 51)
    run = "\n".join(s.get("run", "") for s in publish["steps"])
    verify = run[run.index("release verify") :].splitlines()[0]
    assert "--public-key" not in verify
    assert "--policy" not in verify
    assert publish["strategy"]["max-parallel"] == 1  # one writer of the release index at a time
    refresh = load("release.yml")["jobs"]["refresh-index"]
    assert refresh["environment"] == "release-index"  # deployable from main; holds only the timestamp key
    assert refresh["concurrency"] == publish["concurrency"]  # one group for every index writer
    refresh_run = "\n".join(s.get("run", "") for s in refresh["steps"])
    assert refresh_run.index("source scripts/release-key.sh") < refresh_run.index("release refresh-index --key")


def test_the_floor_is_recorded_after_every_release_and_refresh_by_a_job_that_cannot_write_the_registry() -> None:
    """Issue 51: the rollback floor rises after each release and each daily refresh (record-floor, then the bot's
    pull request: the reviewed commit), in a job that reads the registry only; the index writers cannot write git."""
    jobs = load("release.yml")["jobs"]
    floor = jobs["record-floor"]
    assert floor["needs"] == ["publish", "refresh-index"]
    assert "needs.publish.result == 'success' || needs.refresh-index.result == 'success'" in floor["if"]
    assert floor["permissions"] == {"contents": "read", "packages": "read"}
    assert floor["concurrency"] == jobs["publish"]["concurrency"]  # after the index writers, never between them
    run = "\n".join(s.get("run", "") for s in floor["steps"])
    assert run.index("build.py release record-floor") < run.index("build.py bot open --branch release/floor")
    assert "--path keys/release-index-floor.json --bot-name" in run  # the floor alone
    checkout = next(s for s in floor["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    for writer in ("publish", "refresh-index"):
        assert jobs[writer]["permissions"]["contents"] == "read"


def _triggers(workflow: dict[str, Any]) -> set[str]:
    on = next((value for key, value in workflow.items() if key in ("on", True)), None)  # PyYAML: bare `on` is True
    return set(on) if isinstance(on, dict) else {on} if isinstance(on, str) else set(on or [])


def test_no_pull_request_workflow_reaches_a_self_hosted_runner() -> None:
    """Fork PRs run pr.yml: it must name GitHub-hosted runners only and never call the GPU workflow."""
    for path in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        workflow = load(path.name)
        if not _triggers(workflow) & {"pull_request", "pull_request_target"}:
            continue
        for name, job in workflow["jobs"].items():
            assert "gpu-conformance" not in job.get("uses", ""), f"{path.name}: {name} calls the GPU workflow"
            assert str(job.get("runs-on", "")).startswith("ubuntu-"), f"{path.name}: {name} runs on {job['runs-on']}"


def test_the_gpu_jobs_run_only_for_schedule_dispatch_or_a_release_tag() -> None:
    condition = " ".join(load("gpu-conformance.yml")["jobs"]["gpu"]["if"].split())
    for needed in ("github.event_name == 'schedule'", "github.event_name == 'workflow_dispatch'",
                   "startsWith(github.ref, 'refs/tags/v')"):  # fmt: skip
        assert needed in condition
    assert "pull_request" not in condition
    assert _triggers(load("nightly-gpu.yml")) == {"schedule", "workflow_dispatch"}
    release = load("release.yml")
    assert _triggers(release) == {"push", "schedule", "workflow_dispatch"}  # the schedule refreshes the index only
    assert release["jobs"]["tag"]["if"] == "github.event_name == 'push'"  # no tag push, no build, no GPU job
    assert release["jobs"]["conformance"]["needs"] == "tag"
    assert release["jobs"]["refresh-index"]["if"] == "github.event_name != 'push'"


def test_a_group_run_opens_its_pull_request_only_after_the_candidate_passed() -> None:
    workflow = load("bump.yml")
    triggers = next(value for key, value in workflow.items() if key in ("on", True))
    assert set(triggers) == {"schedule", "workflow_dispatch"}  # YAML 1.1 reads `on:` as True
    jobs = workflow["jobs"]
    assert jobs["bump"]["permissions"] == {"contents": "read"}
    bump_script = " ".join(scripts({"jobs": {"bump": jobs["bump"]}}))
    assert "build.py bot plan --out bump-output" in bump_script  # every target; exit 3 and 4 are outputs there
    assert "--target" not in bump_script
    assert jobs["candidate"]["if"] == "needs.bump.outputs.rebuild == 'true' && inputs.group != ''"  # group runs
    # builds once and pushes the candidate for the fleet; no contents write
    assert jobs["candidate"]["permissions"] == {"contents": "read", "packages": "write"}
    candidate = " ".join(scripts({"jobs": {"c": jobs["candidate"]}}))
    assert candidate.count("build.py push --target cu12") == 1
    assert "bump --record-debian" in candidate
    assert jobs["pull-request"]["needs"] == ["bump", "candidate"]  # skipped when nothing moved or a check failed
    assert jobs["pull-request"]["permissions"] == {"contents": "read"}  # the GitHub App's token writes
    app = jobs["pull-request"]["steps"][0]
    assert app["uses"].startswith("actions/create-github-app-token@")
    assert app["with"]["private-key"] == "${{ secrets.BOT_APP_PRIVATE_KEY }}"
    push = "\n".join(scripts({"jobs": {"pr": jobs["pull-request"]}}))
    assert "git push" not in push  # only through the bot's guard (tests/pytorch_cuda/bot/), never over others'
    assert 'build.py bot open-group --group "$GROUP" --base "$BASE" --image "$IMAGE"' in push


def test_bump_runs_the_fleet_on_the_candidate_digest_and_comments_once() -> None:
    jobs = load("bump.yml")["jobs"]
    gpu = jobs["gpu"]
    assert gpu["runs-on"] == "${{ matrix.labels }}"  # fleet.yaml's runners, through build.py ci-matrix
    assert gpu["if"] == "github.event_name == 'schedule' || github.event_name == 'workflow_dispatch'"
    assert gpu["permissions"] == {"contents": "read", "packages": "read"}
    pulled = " ".join(scripts({"jobs": {"gpu": gpu}}))
    assert 'docker pull "$IMAGE"' in pulled  # the digest the candidate job pushed
    comment = jobs["gpu-comment"]
    assert comment["permissions"] == {"contents": "read", "pull-requests": "write"}
    text = " ".join(scripts({"jobs": {"c": comment}}))
    assert 'build.py report --diff "$RELEASE_RESULTS"' in text
    assert 'build.py bot gpu-comment --pr "$NUMBER"' in text  # the one comment is updated, not repeated
    assert gpu["strategy"]["matrix"] == "${{ fromJSON(needs.candidate.outputs.gpu) }}"  # the fleet's runners
    for name, job in jobs.items():
        if name != "gpu":
            assert job["runs-on"] == "ubuntu-24.04", name


def longest_run_blocks(workflow: dict[str, Any], limit: int = 10) -> list[str]:
    """Each `run:` block of the workflow longer than `limit` lines, as `job: N lines`."""
    found = []
    for name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            lines = len(step.get("run", "").rstrip("\n").splitlines())
            if lines > limit:
                found.append(f"{name}: {lines} lines")
    return found


@pytest.mark.parametrize("name", ["bump.yml", "security.yml"])
def test_the_bots_logic_is_python_and_its_workflows_only_call_it(name: str) -> None:
    """The bot's logic (a plan applied, the branch guard, the pull request's body, create or edit, labels, closing)
    is `build.py bot`, tested against a fake GitHub API and a bare git remote (tests/pytorch_cuda/bot/): no run:
    block of bump.yml is over 10 lines, and neither workflow pushes, commits, edits a pull
    request or asks gh for one."""
    text = "\n".join(scripts(load(name)))
    for call in ("git push", "git commit", "gh pr ", "gh api", "gh issue edit", "push-bot-branch"):
        assert call not in text, f"{name}: {call}"


def test_no_run_block_of_bump_yml_is_over_ten_lines() -> None:
    assert longest_run_blocks(load("bump.yml")) == []
    long_one = {"jobs": {"j": {"steps": [{"run": "\n".join(["echo"] * 11)}]}}}
    assert longest_run_blocks(long_one) == ["j: 11 lines"]  # the count sees a long block


RUN_LINES_MAX = 10  # a longer run: block is logic, and logic belongs in build.py's verbs, under tests
# none left out: bump.yml's and dashboard.yml's flows are build.py verbs now (`bot`, `dashboard`)
REWORKED_ELSEWHERE: set[str] = set()
# Still over the limit: the bot's pull-request and issue flows, which move with bump.yml's to one build.py verb (one
# GitHub API client, not a second). An entry that fits again, or is gone, must leave this list.
LONG_RUN_BLOCKS_LEFT = {
    ("lock-maintenance.yml", "commit to bump/lock-maintenance and open or update its pull request, or close it"),
    ("nightly-gpu.yml", "open or update the issue of each regression (deduplicated by title, label regression)"),
    ("dashboard.yml", "what the ticked boxes ask, if the editor may ask it"),  # to `build.py dashboard --requests`
}


def _run_blocks() -> dict[tuple[str, str], int]:
    blocks = {}
    for path in WORKFLOWS:
        if path.name in REWORKED_ELSEWHERE:
            continue
        for step in steps(load(path.name)):
            if "run" in step:
                blocks[(path.name, str(step.get("name", step["run"])))] = len(step["run"].rstrip("\n").splitlines())
    return blocks


def test_no_run_block_is_longer_than_ten_lines() -> None:
    blocks = _run_blocks()
    long = {key: lines for key, lines in blocks.items() if lines > RUN_LINES_MAX and key not in LONG_RUN_BLOCKS_LEFT}
    assert not long, (
        f"run: blocks over {RUN_LINES_MAX} lines: {long}. Fix: move the logic into a build.py verb (with its tests) "
        "and call it from the step"
    )
    fits = {key for key in LONG_RUN_BLOCKS_LEFT if blocks.get(key, 0) <= RUN_LINES_MAX}
    assert not fits, f"these blocks fit now, or are gone: take them out of LONG_RUN_BLOCKS_LEFT: {sorted(fits)}"
    assert len(blocks) > 40  # the scan reads the workflows' steps


def test_the_nightly_ingests_the_digest_each_gpu_job_recorded() -> None:
    """No --image-digest guessed from artifact names: the GPU job runs the image with the suite's digest variable,
    so each results.json names the image it tested."""
    from conformance.support.results.identity import IMAGE_DIGEST_ENV

    ingest = [r for r in scripts(load("nightly-gpu.yml")) if "results ingest" in r]
    assert len(ingest) == 1
    assert "--image-digest" not in ingest[0]
    (run,) = [r for r in scripts(load("gpu-conformance.yml")) if "docker run --rm --gpus all" in r]
    assert f'-e {IMAGE_DIGEST_ENV}="${{IMAGE#*@}}"' in run


def test_the_nightly_judges_in_its_site_step_and_keeps_the_site_between_nights() -> None:
    """Issue 55: the site is built with `site --judge` (one read of the store: the judge's windows kept, then the
    pages), into last night's site/ restored from the cache, so it rewrites only the pages whose inputs changed;
    the folder store's judge windows go to the results branch with the runs."""
    results = load("nightly-gpu.yml")["jobs"]["results"]["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in results]
    restore, save = uses.index("actions/cache/restore"), uses.index("actions/cache/save")
    build = next(i for i, s in enumerate(results) if "build.py site" in s.get("run", ""))
    assert restore < build < save
    assert {results[i]["with"]["key"] for i in (restore, save)} == {"results-site-${{ github.run_id }}"}
    assert {results[i]["with"]["path"] for i in (restore, save)} == {"site"}
    assert results[restore]["with"]["restore-keys"] == "results-site-"
    assert 'build.py site --judge --store "${SHARED_STORE:-store/}" --out site/' in results[build]["run"]
    assert not [r for r in scripts(load("nightly-gpu.yml")) if "results judge" in r]
    assert "git add judge-windows.json" in "\n".join(s.get("run", "") for s in results)
