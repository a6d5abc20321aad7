"""A Debian security finding carries the CVE (and DSA/DLA) ids its update fixes, read from Debian's archive: the
changelog in the binary .deb the -security suite's Packages index points at, else the source's debian/changelog
(Sources index, .debian.tar.xz), on a Debian archive served on 127.0.0.1. Only the entries newer than the
installed version count. pip-audit's process is faked (no Python pin is at stake here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda.audit import audit_flow
from pytorch_cuda.bump.debian_advisories import fixed_ids
from pytorch_cuda.cli.main import main
from tests.support.audit_doubles import pip_audit_answering
from tests.support.bump_checkout import checkout, committed_debian_packages, current_archive

CHANGELOG = """shadow ({new}) trixie-security; urgency=medium

  * Non-maintainer upload by the Security Team.
  * Fix CVE-2026-11111 and CVE-2026-22222 (DSA-6123-1).

 -- Security Team <team@security.debian.org>  Mon, 30 Nov 2026 10:00:00 +0000

shadow ({old}) unstable; urgency=medium

  * New upstream release; fixes CVE-2023-4641.

 -- Maintainer <m@debian.org>  Mon, 01 Jun 2025 10:00:00 +0000
"""


def test_the_ids_of_the_entries_after_the_installed_version() -> None:
    text = CHANGELOG.format(new="1:4.17.4-2+deb13u9", old="1:4.17.4-2")
    assert fixed_ids(text, "1:4.17.4-2", "1:4.17.4-2+deb13u9") == ("CVE-2026-11111", "CVE-2026-22222", "DSA-6123-1")
    assert fixed_ids(text, "1:4.17.4-1", "1:4.17.4-2") == ("CVE-2023-4641",)


def test_a_debian_finding_names_its_cves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    installed = committed_debian_packages()["passwd"]
    new = installed + "+deb13u9"
    archive = current_archive(tmp_path / "archive")
    archive.publish_security_source("shadow", new, {"passwd": new}, CHANGELOG.format(new=new, old=installed))
    archive.start()
    try:
        root = checkout(tmp_path / "repo", "https://pypi.org/simple", archive.mirror)
        lock = tmp_path / "empty.lock"
        lock.write_text("idna==3.10\n")
        monkeypatch.setattr(
            audit_flow, "run_pip_audit", pip_audit_answering({"idna==3.10": {"version": "3.10", "vulns": []}}, [])
        )
        capsys.readouterr()
        assert main(["audit", "--root", str(root), "--lock", str(lock), "--json"]) == 1
        findings = json.loads(capsys.readouterr().out)["findings"]  # one per CVE, as the VEX's statements
        assert [(f["package"], f["id"], f["aliases"]) for f in findings] == [
            ("passwd", "CVE-2026-11111", ["DSA-6123-1", "trixie-security:passwd"]),
            ("passwd", "CVE-2026-22222", ["DSA-6123-1", "trixie-security:passwd"]),
        ]
        # the .deb gone: the source's debian/changelog says the same; both gone: the suite's id, and a note why
        security = tmp_path / "archive/debian-security"
        for deb in security.glob("pool/updates/main/s/shadow/*.deb"):
            deb.unlink()
        assert main(["audit", "--root", str(root), "--lock", str(lock), "--json"]) == 1
        assert json.loads(capsys.readouterr().out)["findings"][0]["id"] == "CVE-2026-11111"
        (security / "dists/trixie-security/main/source/Sources.xz").unlink()
        assert main(["audit", "--root", str(root), "--lock", str(lock), "--json"]) == 1
        found = json.loads(capsys.readouterr().out)
        assert found["findings"][0]["id"] == "trixie-security:passwd"
        assert any(note.startswith(f"Debian passwd {new}: no CVE/DSA ids") for note in found["notes"])
    finally:
        archive.stop()
