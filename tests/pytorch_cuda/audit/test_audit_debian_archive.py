"""audit's Debian half without its archive (audit/debian_audit.py): an archive that does not answer, or answers
with what is no Packages index, is one exit-2 paragraph that names the -security check and --no-debian; a base
with no committed record is a note, and its archive is never asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda.audit import debian_audit
from pytorch_cuda.audit.findings import Finding
from pytorch_cuda.errors import EngineError
from pytorch_cuda.matrix.build_matrix import Matrix


def _unreachable(url: str, ca: Path | None, accept: str = "*/*") -> tuple[str, bytes]:
    raise EngineError(cause=f"cannot read {url} (connection refused)", fix="run bump where it answers")


@pytest.mark.parametrize(
    ("fetch", "said"),
    [
        (_unreachable, "(connection refused)"),
        (lambda url, ca, accept="*/*": ("", b"\xfd7zXZ\x00 not xz"), "is not a Debian Packages index"),
    ],
    ids=["unreachable", "no-index"],
)
def test_an_archive_that_does_not_answer_is_one_paragraph_naming_no_debian(
    matrix: Matrix, root: Path, monkeypatch: pytest.MonkeyPatch, fetch: object, said: str
) -> None:
    monkeypatch.setattr(debian_audit, "fetch_bytes", fetch)
    findings: list[Finding] = []
    with pytest.raises(EngineError) as raised:
        debian_audit.audit_debian(matrix, root, None, findings, lambda _: None)
    assert said in raised.value.cause
    assert raised.value.cause.endswith("; the Debian -security check needs the base's archive")
    assert "--no-debian" in raised.value.fix
    assert findings == []


def test_a_base_without_a_record_is_a_note_and_no_archive_call(
    matrix: Matrix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(debian_audit, "fetch_bytes", lambda *_: pytest.fail("the archive was asked"))
    logged: list[str] = []
    count, notes = debian_audit.audit_debian(matrix, tmp_path, None, [], logged.append)
    assert (count, logged) == (0, [])
    assert notes == ["base trixie: no Debian package record (images/debian-trixie.lock); its packages are not audited"]
