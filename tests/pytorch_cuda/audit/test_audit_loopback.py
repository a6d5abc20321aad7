"""`build.py audit` on locks made by the real uv from a package index on 127.0.0.1 (tests/support/loopback_index.py),
with real published advisories: ecdsa 0.19.2 (CVE-2024-23342, no fixed release) looked up on PyPI itself, and
jinja2 2.10 (PYSEC-2019-217, fixed in 2.10.1) on an OSV-compatible service on 127.0.0.1 answering from that
advisory's published record. The Debian -security suite is a loopback archive with a newer passwd."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from pytorch_cuda.cli.main import main
from tests.support.bump_checkout import checkout, committed_debian_packages
from tests.support.loopback_debian import LoopbackArchive
from tests.support.loopback_index import LoopbackIndex, Release
from tests.support.loopback_osv import osv_service

pytestmark = pytest.mark.integration

RECORDS = Path(__file__).resolve().parents[2] / "fixtures" / "osv"
LOCK = "images/cu128-runtime/requirements.lock"


def _locked_checkout(tmp_path: Path, index: LoopbackIndex, mirror: str) -> Path:
    """The checkout, with ecdsa 0.19.2 and jinja2 2.10 pinned in python_packages and locked from the index."""
    index.publish(Release("ecdsa", "0.19.2"), Release("jinja2", "2.10"), Release("jinja2", "2.10.1"))
    root = checkout(tmp_path / "repo", index.url, mirror)
    matrix = yaml.safe_load((root / "matrix.yaml").read_text(encoding="utf-8"))
    matrix["python_packages"] |= {"ecdsa": "0.19.2", "jinja2": "2.10"}
    (root / "matrix.yaml").write_text(yaml.safe_dump(matrix, sort_keys=False), encoding="utf-8")
    assert main(["render", "--root", str(root)]) == 0
    assert main(["lock", "--root", str(root), "--target", "cu128"]) == 0
    text = (root / LOCK).read_text(encoding="utf-8")
    assert "ecdsa==0.19.2 \\" in text
    assert "jinja2==2.10 \\" in text
    return root


def _audit(root: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    status = main(["audit", "--root", str(root), "--lock", LOCK, "--json", *flags])
    return status, json.loads(capsys.readouterr().out)


def _pypi_answers() -> bool:
    try:
        with urllib.request.urlopen("https://pypi.org/pypi/ecdsa/json", timeout=10) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def test_osv_advisory_with_a_fix_and_a_debian_security_update(
    tmp_path: Path, loopback_index: LoopbackIndex, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = LoopbackArchive(tmp_path / "archive")
    packages = committed_debian_packages()
    archive.publish("", packages)
    archive.publish("-updates", {})
    archive.publish("-security", {"passwd": packages["passwd"] + "+deb13u9"})
    archive.start()
    try:
        root = _locked_checkout(tmp_path, loopback_index, archive.mirror)
        vex = tmp_path / "out" / "vex.cdx.json"
        with osv_service(RECORDS) as url:
            status, result = _audit(
                root,
                capsys,
                "--service",
                "osv",
                "--osv-url",
                url,
                "--vex",
                str(vex),
                "--markdown-pr",
                str(tmp_path / "out" / "pr.md"),
                "--github-output",
                str(tmp_path / "out" / "github_output"),
                "--summary",
                str(tmp_path / "out" / "summary.md"),
            )
            capsys.readouterr()
            # --fix: the pin moves to the lowest fixed version, the lock is re-resolved; passwd needs a rebuild
            fixed_status = main(
                [
                    "audit",
                    "--root",
                    str(root),
                    "--lock",
                    LOCK,
                    "--no-debian",
                    "--json",
                    "--fix",
                    "--service",
                    "osv",
                    "--osv-url",
                    url,
                ]
            )
            fixed = json.loads(capsys.readouterr().out)["fixed"]
    finally:
        archive.stop()
    assert status == 1, result
    found = {(f["package"], f["version"]): f for f in result["findings"]}
    jinja = found[("jinja2", "2.10")]
    assert (jinja["id"], sorted(jinja["aliases"]), jinja["fix_versions"]) == (
        "PYSEC-2019-217",
        ["CVE-2019-10906", "GHSA-462w-v97r-4m45"],
        ["2.10.1"],
    )
    assert jinja["action"] == "pull-request"
    assert jinja["locks"] == [LOCK]
    passwd = found[("passwd", packages["passwd"])]
    assert passwd["fix_versions"] == [packages["passwd"] + "+deb13u9"]
    assert passwd["action"] == "pull-request"
    assert ("ecdsa", "0.19.2") not in found  # the loopback service has no record for it
    assert result["pull_request"] == ["PYSEC-2019-217", "trixie-security:passwd"]
    assert result["issue"] == []
    document = json.loads(vex.read_text())
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(vex.read_text()) is None
    ids = {v["id"]: v["affects"][0]["ref"] for v in document["vulnerabilities"]}
    assert ids["PYSEC-2019-217"] == "pkg:pypi/jinja2@2.10"
    assert "CVE-2019-10906" in (tmp_path / "out" / "pr.md").read_text()
    # the security workflow's step outputs and job summary (security.yml reads them)
    assert (tmp_path / "out" / "github_output").read_text() == "fixable=1\ndebian=1\nunfixable=0\n"
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert summary.startswith("### build.py audit\n" + (tmp_path / "out" / "pr.md").read_text())
    assert fixed_status == 1  # what it fixed is in the next audit, not this one
    assert fixed["pins"] == [
        {
            "pin": "python_packages.jinja2",
            "package": "jinja2",
            "old": "2.10",
            "new": "2.10.1",
            "advisory": "PYSEC-2019-217",
        }
    ]
    assert "jinja2==2.10.1 \\" in (root / LOCK).read_text()
    assert yaml.safe_load((root / "matrix.yaml").read_text())["python_packages"]["jinja2"] == "2.10.1"
    assert main(["render", "--root", str(root), "--check"]) == 0


@pytest.mark.skipif(not _pypi_answers(), reason="pypi.org's JSON API does not answer from here")
def test_a_real_pypi_advisory_without_a_fix(
    tmp_path: Path, loopback_index: LoopbackIndex, debian_archive: LoopbackArchive, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _locked_checkout(tmp_path, loopback_index, debian_archive.mirror)
    status, result = _audit(root, capsys, "--markdown-issue", str(tmp_path / "issue.md"))
    assert status == 1, result
    ecdsa = next(f for f in result["findings"] if f["package"] == "ecdsa")
    assert "CVE-2024-23342" in [ecdsa["id"], *ecdsa["aliases"]]
    assert (ecdsa["version"], ecdsa["fix_versions"], ecdsa["action"]) == ("0.19.2", [], "issue")
    assert "CVE-2024-23342" in (tmp_path / "issue.md").read_text()
    # jinja2 2.10 is found by pip-audit where PyPI's per-version JSON answers, else listed as not audited
    jinja = [f for f in result["findings"] if f["package"] == "jinja2"]
    missing = [n for n in result["not_audited"] if n["package"] == "jinja2"]
    assert bool(jinja) != bool(missing)
