"""The security lane's parts without the network: which locks and pins, pip-audit's answers (its process is the
boundary faked here, with the JSON it prints), PyPI's newest-release fallback, the actions and the VEX document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from pytorch_cuda.audit.audit_markdown import markdown, summary_lines
from pytorch_cuda.audit.findings import EXIT_CLEAN, EXIT_FINDINGS, AuditResult, python_findings
from pytorch_cuda.audit.fixing import lowest_fix
from pytorch_cuda.audit.lock_pins import LockedPin, find_locks, read_pins
from pytorch_cuda.audit.python_audit import Service, audit_pins
from pytorch_cuda.cli.main import main
from pytorch_cuda.errors import EXIT_PARTIAL, UserError
from pytorch_cuda_sbom.vex import VexEntry, vex_document
from tests.support.audit_doubles import pip_audit_answering

ROOT = Path(__file__).resolve().parents[3]
ECDSA = {
    "info": {"version": "0.19.2"},
    "vulnerabilities": [
        {
            "id": "PYSEC-2026-1325",
            "aliases": ["CVE-2024-23342", "GHSA-wj6h-64fc-37mp"],
            "fixed_in": [],
            "details": "Minerva timing attack on P-256",
        },
        {
            "id": "GHSA-wj6h-64fc-37mp",
            "aliases": ["CVE-2024-23342", "PYSEC-2026-1325"],
            "fixed_in": [],
            "details": "Minerva timing attack on P-256",
        },
    ],
}


def test_every_python_lock_but_the_layer_slices() -> None:
    found = [str(p.relative_to(ROOT)) for p in find_locks(ROOT)]
    assert "images/cu128-runtime/requirements.lock" in found
    assert "images/cu128-jupyter/requirements-flavour.lock" in found
    assert {"images/installer.lock", "images/sbom-tool.lock", "requirements/build.txt"} <= set(found)
    assert not [name for name in found if "layer-" in name or name.endswith("debian-trixie.lock")]
    assert any(p.name == "torch" for p in read_pins(ROOT / "images/cu128-runtime/requirements.lock", ROOT))


def test_a_local_label_is_audited_as_its_public_version(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.lock"
    lock.write_text("--index-url https://download.pytorch.org/whl/cu126\nTorch==2.9.1+cu126 \\\n    --hash=sha256:00\n")
    (torch,) = read_pins(lock, tmp_path)
    assert (torch.name, torch.version, torch.public, torch.lock) == (
        "torch",
        "2.9.1+cu126",
        "2.9.1",
        "requirements.lock",
    )


def test_a_lock_that_is_not_there_or_pins_no_version(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        read_pins(tmp_path / "missing.lock", tmp_path)
    bad = tmp_path / "bad.lock"
    bad.write_text("numpy==not-a-version \\\n", encoding="utf-8")
    with pytest.raises(UserError, match="not a PEP 440 version"):
        read_pins(bad, tmp_path)


def test_pip_audit_answers_and_the_newest_release_fallback() -> None:
    pins = [
        LockedPin("images/a.lock", "jinja2", "2.10"),
        LockedPin("requirements/build.txt", "jinja2", "3.1.6"),  # a second version: a second pip-audit run
        LockedPin("images/a.lock", "ecdsa", "0.19.2"),
        LockedPin("images/a.lock", "mpmath", "1.3.0"),
    ]
    jinja = [
        {"id": "PYSEC-2019-217", "aliases": ["CVE-2019-10906"], "fix_versions": ["2.10.1"], "description": "x"},
        {"id": "GHSA-462w-v97r-4m45", "aliases": ["CVE-2019-10906"], "fix_versions": ["2.10.1"], "description": "x"},
    ]
    missing = {"skip_reason": "Dependency not found on PyPI and could not be audited"}
    answers: dict[str, dict[str, Any]] = {
        "jinja2==2.10": {"version": "2.10", "vulns": jinja},
        "jinja2==3.1.6": {"version": "3.1.6", "vulns": []},
        "ecdsa==0.19.2": missing,
        "mpmath==1.3.0": missing,
    }
    seen: list[str] = []
    projects = {"https://pypi.test/ecdsa/json": ECDSA, "https://pypi.test/mpmath/json": {"info": {"version": "1.4.1"}}}
    result = audit_pins(
        pins, Service(pypi_json="https://pypi.test"), pip_audit_answering(answers, seen), projects.get, print
    )
    assert sorted(seen) == [
        "ecdsa==0.19.2\njinja2==3.1.6\n",
        "jinja2==2.10\nmpmath==1.3.0\n",
    ]  # no file names one twice, and no second round of a few: the runs are side by side, so in any order
    by_name = {a.name: a for a in result.advisories}
    assert by_name["jinja2"].ids == ("PYSEC-2019-217", "CVE-2019-10906", "GHSA-462w-v97r-4m45")  # one advisory
    assert by_name["ecdsa"].ids == ("PYSEC-2026-1325", "CVE-2024-23342", "GHSA-wj6h-64fc-37mp")
    assert by_name["ecdsa"].source == "PyPI project JSON"
    assert result.audited == 3
    assert result.not_audited == (
        (
            "mpmath",
            "1.3.0",
            "the advisory service did not answer for this version, and PyPI's project JSON answers for 1.4.1 only",
        ),
    )
    findings = python_findings(result, pins)
    assert [(f.package, f.version, f.action, f.locks) for f in findings] == [
        ("ecdsa", "0.19.2", "issue", ("images/a.lock",)),
        ("jinja2", "2.10", "pull-request", ("images/a.lock",)),
    ]
    audit = AuditResult(tuple(findings), result.not_audited, ("images/a.lock",), 4, result.audited, 0)
    assert audit.exit_status == EXIT_FINDINGS
    assert lowest_fix(next(f for f in findings if f.package == "jinja2")) == "2.10.1"
    assert "| jinja2 | 2.10 | PYSEC-2019-217" in markdown(audit, "pull-request")
    assert "CVE-2024-23342" in markdown(audit, "issue")
    assert summary_lines(audit)[-1].startswith("result: findings:")


def test_exit_status_clean_and_partial() -> None:
    assert AuditResult((), (), ("a",), 1, 1, 0).exit_status == EXIT_CLEAN
    assert AuditResult((), (("x", "1", "why"),), ("a",), 1, 0, 0).exit_status == EXIT_PARTIAL


def test_the_vex_document_is_valid_cyclonedx_1_6() -> None:
    entries = [
        VexEntry(
            "pkg:pypi/jinja2@2.10", "jinja2", "2.10", ("PYSEC-2019-217", "CVE-2019-10906"), ("2.10.1",), "x", "osv"
        ),
        VexEntry("pkg:pypi/ecdsa@0.19.2", "ecdsa", "0.19.2", ("PYSEC-2026-1325",), (), "y", "PyPI project JSON"),
        VexEntry(
            "pkg:deb/debian/passwd@1:4.17.4-2?arch=amd64",
            "passwd",
            "1:4.17.4-2",
            ("trixie-security:passwd",),
            ("1:4.17.4-2+deb13u1",),
            "z",
            "Debian security archive",
        ),
    ]
    document = vex_document(entries, "0.1.0", "2026-12-05T12:00:00Z")
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(document)) is None
    states = {v["id"]: v["analysis"]["response"] for v in document["vulnerabilities"]}
    assert states == {
        "PYSEC-2019-217": ["update"],
        "PYSEC-2026-1325": ["can_not_fix"],
        "trixie-security:passwd": ["update"],
    }
    assert {c["bom-ref"] for c in document["components"]} == {e.purl for e in entries}


def test_audit_of_a_lock_that_is_not_there(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--root", str(ROOT), "--lock", "images/nope.lock", "--no-debian"]) == 2
    assert "images/nope.lock is not a lock file" in " ".join(capsys.readouterr().err.split())
