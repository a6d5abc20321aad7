"""security.yml: daily; the audit's token reads only; a fix goes through the guarded push and a labelled pull
request with the GitHub App's token, a Debian update dispatches bump.yml without the release-age gate, an
advisory without a fix opens one labelled issue."""

from __future__ import annotations

from typing import Any

from tests.support.workflow_files import load, scripts


def _script(job: dict[str, Any]) -> str:
    return "\n".join(scripts({"jobs": {"j": job}}))


def test_the_security_lane() -> None:
    workflow = load("security.yml")
    triggers = next(value for key, value in workflow.items() if key in ("on", True))
    assert triggers["schedule"] == [{"cron": "41 5 * * *"}]
    jobs = workflow["jobs"]
    assert jobs["audit"]["permissions"] == {"contents": "read"}
    audit = _script(jobs["audit"])
    assert "build.py audit --json --vex security/vex.cdx.json" in audit
    assert "0 | 1) ;;" in audit
    fix = jobs["fix"]
    assert fix["if"] == "needs.audit.outputs.fixable != '0'"
    assert fix["permissions"] == {"contents": "read"}
    assert fix["steps"][0]["uses"].startswith("actions/create-github-app-token@")
    text = _script(fix)
    assert "build.py audit --fix" in text
    assert "git push" not in text
    assert 'build.py bot open --branch security/fixes --base "$BASE" --label security' in text
    debian = jobs["debian"]
    assert debian["permissions"] == {"actions": "write"}
    assert "gh workflow run bump.yml" in _script(debian)
    assert "-f group=security -f ignore-release-age=true" in _script(debian)
    bump_inputs = next(v for k, v in load("bump.yml").items() if k in ("on", True))["workflow_dispatch"]["inputs"]
    assert "ignore-release-age" in bump_inputs
    assert "security" in bump_inputs["group"]["options"]
    issue = jobs["issue"]
    assert issue["permissions"] == {"contents": "read", "issues": "write"}
    assert "build.py bot advisory-issues --audit security/audit.json" in _script(issue)  # tests/pytorch_cuda/bot/


def test_the_release_attests_the_sbom_with_the_vex_in_it() -> None:
    (job,) = [j for j in load("release.yml")["jobs"].values() if "attest-sbom" in str(j)]
    names = [step.get("name", step.get("uses", "")) for step in job["steps"]]
    into = next(n for n in names if n.startswith("the VEX into the SBOM"))
    attest = next(n for n in names if n.startswith("keyless CycloneDX SBOM attestation"))
    sign = next(n for n in names if n.startswith("sign and attest the tested digest"))
    assert names.index(into) < names.index(sign) < names.index(attest)  # the key's and the keyless attestation
    # both carry the VEX: it is put into the SBOM before either is made
    script = next(s["run"] for s in job["steps"] if s.get("name") == into)
    assert '--sbom "candidate/build-output/sbom-$VARIANT.cdx.json"' in script
    assert "0 | 1 | 4) ;;" in script
