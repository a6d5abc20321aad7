"""What audit writes beside its answer (audit/audit_files.py), and the parts of `audit --fix` and the PyPI JSON read
that live beside the lane's other rooms (audit/fixing.py, audit/python_audit.py): the VEX document of the open and
the settled findings, stamped with the time given; the VEX put into an SBOM in place; the two Markdown files; an
SBOM that cannot be read is one paragraph; --fix's report and its Debian note; a 404 of PyPI's JSON is None."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from pytorch_cuda.audit import python_audit
from pytorch_cuda.audit.audit_files import AuditFiles, audit_vex, write_audit_files
from pytorch_cuda.audit.audit_markdown import lane_outputs, lane_summary, markdown
from pytorch_cuda.audit.findings import AuditResult, Finding
from pytorch_cuda.audit.fixing import fix_findings
from pytorch_cuda.audit.triage import Decision, Triage
from pytorch_cuda.console.github_step import write_step_outputs
from pytorch_cuda.errors import EngineError, UserError
from tests.support.audit_doubles import SBOM

ROOT = Path(__file__).resolve().parents[3]
JINJA = Finding("pypi", "Jinja2", "2.10", ("PYSEC-2019-217",), ("2.10.1",), "x", "osv", ("requirements/a.txt",))
ECDSA = Finding("pypi", "ecdsa", "0.19.2", ("GHSA-wj6h-64fc-37mp", "CVE-2024-23342"), (), "Minerva", "osv", ())
PASSWD = Finding(
    "deb", "passwd", "1:4.17.4-2", ("trixie-security:passwd",), ("1:4.17.4-2+deb13u1",), "z", "Debian", ("x.lock",)
)
DECIDED = Decision(
    id="CVE-2024-23342", package="ecdsa", state="not_affected", justification="code_not_reachable", detail="unused"
)
RESULT = AuditResult((JINJA, PASSWD), (), ("requirements/a.txt",), 3, 3, 1, (), ((ECDSA, DECIDED),))
TRIAGE = Triage(decisions=(DECIDED,))
NOW = datetime(2026, 12, 6, 8, 30, 15, 123456, tzinfo=UTC)


def test_the_vex_holds_the_open_and_the_settled_findings_stamped_to_the_second() -> None:
    vex = audit_vex(RESULT, TRIAGE, NOW)
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(vex)) is None
    assert vex["metadata"]["timestamp"] == "2026-12-06T08:30:15Z"
    analysis = {v["id"]: v["analysis"] for v in vex["vulnerabilities"]}
    assert set(analysis) == {"PYSEC-2019-217", "trixie-security:passwd", "GHSA-wj6h-64fc-37mp"}
    assert analysis["GHSA-wj6h-64fc-37mp"]["state"] == "not_affected"  # the committed decision


def test_each_file_asked_for_is_written_and_no_other(tmp_path: Path) -> None:
    (tmp_path / "sbom.json").write_text(json.dumps(SBOM))
    asked = AuditFiles(tmp_path / "out/vex.json", tmp_path / "sbom.json", tmp_path / "md/pr.md", tmp_path / "md/i.md")
    write_audit_files(RESULT, TRIAGE, asked, NOW)
    vex = json.loads((tmp_path / "out/vex.json").read_text())
    assert vex.pop("serialNumber").startswith("urn:uuid:")  # each document its own
    assert vex == {k: v for k, v in audit_vex(RESULT, TRIAGE, NOW).items() if k != "serialNumber"}
    sbom = json.loads((tmp_path / "sbom.json").read_text())
    assert {v["id"] for v in sbom["vulnerabilities"]} == {"PYSEC-2019-217", "GHSA-wj6h-64fc-37mp"}  # its components
    assert "PYSEC-2019-217" in (tmp_path / "md/pr.md").read_text()
    assert "PYSEC-2019-217" not in (tmp_path / "md/i.md").read_text()
    before = sorted(tmp_path.rglob("*"))
    write_audit_files(RESULT, TRIAGE, AuditFiles(), NOW)
    assert sorted(tmp_path.rglob("*")) == before


def test_an_sbom_that_cannot_be_read_is_one_paragraph(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"cannot read the SBOM .*missing\.json \(No such file or directory\)"):
        write_audit_files(RESULT, TRIAGE, AuditFiles(sbom=tmp_path / "missing.json"), NOW)


def test_fix_moves_a_matrix_pin_and_names_the_debian_findings_a_rebuild_takes(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text((ROOT / "matrix.yaml").read_text())
    numpy = Finding("pypi", "numpy", "2.5.5", ("GHSA-n", "CVE-1"), ("2.5.7", "2.5.6"), "x", "osv", ())
    report = fix_findings(matrix, tmp_path, [numpy, ECDSA, PASSWD], None, lambda _: None)
    assert 'numpy: "2.5.6"' in matrix.read_text()
    assert report.as_json() == {
        "pins": [
            {"pin": "python_packages.numpy", "package": "numpy", "old": "2.5.5", "new": "2.5.6", "advisory": "GHSA-n"}
        ],
        "locks": [],
        "notes": [
            "Debian -security has newer passwd: a rebuild from a fresh base takes them (the bump workflow, "
            "dispatched by the security lane)"
        ],
    }


def test_pypi_json_is_none_for_a_404_and_the_error_otherwise() -> None:
    """A real HTTP server on 127.0.0.1: a JSON page, a 404 (None), a 500 and a closed port (one EngineError each)."""

    class Pages(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status = 404 if self.path.endswith("/gone/json") else 500 if self.path.endswith("/bad/json") else 200
            data = b'{"info": {"version": "1.0"}}' if status == 200 else b"{}"
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/pypi"
    try:
        read = python_audit.pypi_json(None)
        assert read(f"{url}/ok/json") == {"info": {"version": "1.0"}}
        assert read(f"{url}/gone/json") is None
        with pytest.raises(EngineError, match=r"bad/json \(HTTP 500\)"):
            read(f"{url}/bad/json")
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(EngineError, match=r"cannot read http://127\.0\.0\.1"):
        read(f"{url}/ok/json")  # the server is gone: the port refuses


def test_the_lane_counts_and_the_job_summary_are_the_workflows_outputs(tmp_path: Path) -> None:
    """fixable: PyPI findings with a fix (Jinja2); debian: Debian's (passwd, rebuilt by bump); unfixable: none."""
    result = AuditResult((JINJA, PASSWD, ECDSA), (), ("requirements/a.txt",), 4, 4, 1)
    assert lane_outputs(result) == {"fixable": "1", "debian": "1", "unfixable": "1"}
    summary = lane_summary(result)
    assert summary == "### build.py audit\n" + markdown(result, "pull-request") + markdown(result, "issue")
    output = tmp_path / "github_output"
    write_step_outputs(output, lane_outputs(result))
    assert output.read_text(encoding="utf-8") == "fixable=1\ndebian=1\nunfixable=1\n"
