"""Triage decisions committed in vex-triage.yaml: read (a closed format; not_affected needs a justification),
carried into the VEX, settling a finding (no pull request, no issue, no failed lane); and the VEX put into the
image's SBOM on the components it lists, by package URL, as the release attests it. pip-audit's process is the
boundary faked here (tests/pytorch_cuda/audit/test_audit.py's helper)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from pytorch_cuda.audit import audit_flow
from pytorch_cuda.audit.triage import load_triage
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
