"""Triage decisions committed in vex-triage.yaml: read (a closed format; not_affected needs a justification),
carried into the VEX, settling a finding (no pull request, no issue, no failed lane); and the VEX put into the
image's SBOM on the components it lists, by package URL, as the release attests it. pip-audit's process is the
boundary faked here (tests/pytorch_cuda/audit/test_audit.py's helper)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from pytorch_cuda.audit import audit_flow
from pytorch_cuda.audit.audit_files import audit_vex
from pytorch_cuda.audit.findings import AuditResult, apply_triage, debian_findings
from pytorch_cuda.audit.triage import Triage, load_triage
from pytorch_cuda.bump.debian_archive import DebianUpdate
from pytorch_cuda.cli.main import main
from pytorch_cuda.errors import UserError
from pytorch_cuda_sbom.vex import embed, purl_key
from tests.support.audit_doubles import SBOM, pip_audit_answering

ROOT = Path(__file__).resolve().parents[3]
ECDSA = {"id": "GHSA-wj6h-64fc-37mp", "aliases": ["CVE-2024-23342"], "fix_versions": [], "description": "Minerva"}
JINJA = {"id": "PYSEC-2019-217", "aliases": ["CVE-2019-10906"], "fix_versions": ["2.10.1"], "description": "x"}
DECISION = """decisions:
  - id: CVE-2024-23342
    package: ecdsa
    state: not_affected
    justification: code_not_reachable
    detail: nothing in the image signs with ecdsa
"""


def test_the_triage_file_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "vex-triage.yaml"
    assert load_triage(path).decisions == ()  # none committed: nothing decided
    path.write_text(DECISION.replace("    justification: code_not_reachable\n", ""))
    with pytest.raises(UserError, match="not_affected without a justification"):
        load_triage(path)
    path.write_text(DECISION.replace("justification:", "justifcation:"))
    with pytest.raises(UserError, match="justifcation"):
        load_triage(path)
    assert load_triage(ROOT / "vex-triage.yaml").decisions == ()  # the committed file reads


def test_a_decision_settles_its_finding_and_the_vex_goes_into_the_sbom(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "a.lock"
    lock.write_text("ecdsa==0.19.2\njinja2==2.10\n")
    answers = {
        "ecdsa==0.19.2": {"version": "0.19.2", "vulns": [ECDSA]},
        "jinja2==2.10": {"version": "2.10", "vulns": [JINJA]},
    }
    monkeypatch.setattr(audit_flow, "run_pip_audit", pip_audit_answering(answers, []))
    (tmp_path / "triage.yaml").write_text(DECISION + "  - {id: GHSA-gone, package: idna, state: resolved, detail: x}\n")
    (tmp_path / "sbom.json").write_text(json.dumps(SBOM))
    argv = [
        "audit",
        "--root",
        str(ROOT),
        "--lock",
        str(lock),
        "--no-debian",
        "--json",
        "--vex",
        str(tmp_path / "vex.json"),
    ]
    argv += ["--triage", str(tmp_path / "triage.yaml"), "--sbom", str(tmp_path / "sbom.json")]
    capsys.readouterr()
    assert main(argv) == 1  # jinja2's advisory is still open
    found = json.loads(capsys.readouterr().out)
    assert found["pull_request"] == ["PYSEC-2019-217"]
    assert found["issue"] == []  # ecdsa's is settled: no issue
    assert found["triaged"] == [
        {"id": "GHSA-wj6h-64fc-37mp", "package": "ecdsa", "state": "not_affected", "detail": "nothing in the image "
         "signs with ecdsa", "justification": "code_not_reachable"},
    ]  # fmt: skip
    assert "vex-triage.yaml: GHSA-gone (idna) matches no finding any more; remove it" in found["notes"]
    vex = json.loads((tmp_path / "vex.json").read_text())
    analysis = {v["id"]: v["analysis"] for v in vex["vulnerabilities"]}
    assert analysis["GHSA-wj6h-64fc-37mp"]["state"] == "not_affected"
    assert analysis["GHSA-wj6h-64fc-37mp"]["justification"] == "code_not_reachable"
    assert analysis["PYSEC-2019-217"]["state"] == "in_triage"
    sbom = json.loads((tmp_path / "sbom.json").read_text())
    assert {v["id"]: [a["ref"] for a in v["affects"]] for v in sbom["vulnerabilities"]} == {
        "PYSEC-2019-217": ["jinja-ref"],  # the SBOM's bom-ref, matched by package URL (Jinja2 = jinja2)
        "GHSA-wj6h-64fc-37mp": ["ecdsa-ref"],
    }
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(sbom)) is None


def test_a_vulnerability_of_a_component_the_sbom_lacks_is_left_out() -> None:
    vex = {"vulnerabilities": [{"id": "X", "affects": [{"ref": "pkg:pypi/torch@2.9.1"}]}]}
    assert embed(SBOM, vex)["vulnerabilities"] == []
    with_torch = {**SBOM, "components": [{"type": "library", "name": "torch", "purl": "pkg:pypi/torch@2.9.1%2Bcu128"}]}
    assert embed(with_torch, vex)["vulnerabilities"][0]["affects"] == [{"ref": "pkg:pypi/torch@2.9.1%2Bcu128"}]
    assert purl_key("pkg:deb/debian/passwd@1:4.17.4-2?arch=amd64") == ("deb", "debian/passwd", "1:4.17.4-2")


BAD = """decisions:
  - {id: CVE-2026-1, package: openssl, state: ignored, detail: x}
  - {id: CVE-2026-2, package: openssl, state: not_affected, detail: y}
  - {id: CVE-2026-3, package: openssl, state: resolved, detial: z}
"""


def test_a_bad_triage_file_is_one_paragraph_before_the_audit_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the file was read after 15-20 s of auditing, and the error was pydantic's own text."""

    def no_audit(*_: object) -> None:
        raise AssertionError("the audit started before the triage file was checked")

    monkeypatch.setattr(audit_flow, "read_all", no_audit)
    (tmp_path / "triage.yaml").write_text(BAD)
    capsys.readouterr()
    assert main(["audit", "--root", str(ROOT), "--triage", str(tmp_path / "triage.yaml")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "triage.yaml is not a triage file: decisions[0] (CVE-2026-1, openssl): state: 'ignored' is not one of "
        "'not_affected', 'false_positive', 'resolved', 'exploitable', 'in_triage'; decisions[1] (CVE-2026-2, "
        "openssl): CVE-2026-2 (openssl) is not_affected without a justification; decisions[2] (CVE-2026-3, "
        "openssl): detail: missing; decisions[2] (CVE-2026-3, openssl): detial: is not a key of a decision"
    ) in err
    assert "pydantic" not in err  # pydantic's own text and its errors.pydantic.dev links are gone
    (tmp_path / "triage.yaml").write_text("decisions: [\n")
    assert main(["audit", "--root", str(ROOT), "--triage", str(tmp_path / "triage.yaml")]) == 2
    assert "triage.yaml is not YAML at line 2" in " ".join(capsys.readouterr().err.split())


def test_one_vex_statement_per_cve_of_a_debian_update() -> None:
    """Before: openssl's update that fixes 13 CVEs was one finding, one VEX statement, the 12 others its aliases,
    so a decision on any one of them settled all 13."""
    update = DebianUpdate("openssl", "3.5.1-1", "3.5.1-1+deb13u1", "trixie-security", security=True)
    cves = tuple(f"CVE-2026-{n:04d}" for n in range(1, 14))
    findings = debian_findings([update], "images/debian-trixie.lock", {"openssl": (*cves, "DSA-6100-1")})
    assert [f.ids for f in findings] == [(cve, "DSA-6100-1", "trixie-security:openssl") for cve in cves]
    one = Triage.model_validate(
        {"decisions": [{"id": "CVE-2026-0007", "package": "openssl", "state": "false_positive", "detail": "x"}]}
    )
    still_open, settled = apply_triage(findings, one)
    assert [f.ids[0] for f, _ in settled] == ["CVE-2026-0007"]
    assert len(still_open) == 12
    result = AuditResult(tuple(still_open), (), (), 0, 0, 1, (), tuple(settled))
    vex = audit_vex(result, one, datetime(2026, 12, 7, tzinfo=UTC))
    states = {v["id"]: v["analysis"]["state"] for v in vex["vulnerabilities"]}
    assert len(states) == 13
    assert states["CVE-2026-0007"] == "false_positive"
    assert {s for cve, s in states.items() if cve != "CVE-2026-0007"} == {"in_triage"}
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(vex)) is None
    advisory = Triage.model_validate(
        {"decisions": [{"id": "DSA-6100-1", "package": "openssl", "state": "resolved", "detail": "rebuilt"}]}
    )
    assert apply_triage(findings, advisory)[0] == []  # a decision on the DSA covers every CVE it fixes
