"""audit's Debian half without its archive (audit/debian_audit.py): an archive that does not answer, or answers
with what is no Packages index, is one exit-2 paragraph that names the -security check and --no-debian; a base
with no committed record is a note, and its archive is never asked. The check gets only the recorded packages'
paragraphs of an index, and each page is fetched once across the threads that read the updates' changelogs."""

from __future__ import annotations

import lzma
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Event

import pytest

from pytorch_cuda.audit import debian_audit
from pytorch_cuda.audit.debian_audit import recorded_only
from pytorch_cuda.audit.findings import Finding
from pytorch_cuda.bump.debian_archive import newest
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


def test_the_archive_check_reads_only_the_recorded_packages_paragraphs() -> None:
    """trixie main's index is 60,000 paragraphs; the audit hands the check the recorded ones only."""
    paragraphs = [f"Package: p{n}\nVersion: 1.{n}\nArchitecture: amd64\n" for n in range(3000)]
    index = lzma.compress("\n".join(paragraphs).encode())

    def fetch(url: str) -> bytes:
        return index if url.endswith("Packages.xz") else b"not an index"

    only = recorded_only(fetch, frozenset({"p7", "p2999"}))
    page = only("http://m/dists/trixie/main/binary-amd64/Packages.xz")
    assert [p.strip() for p in page.split(b"\n\n") if p.strip()] == [
        b"Package: p7\nVersion: 1.7\nArchitecture: amd64",
        b"Package: p2999\nVersion: 1.2999\nArchitecture: amd64",
    ]
    assert {k: str(v) for k, v in newest(page, ["p7", "p2999", "p8"]).items()} == {"p7": "1.7", "p2999": "1.2999"}
    assert only("http://m/pool/x.deb") == b"not an index"  # anything else as it was


def test_each_page_is_fetched_once_however_many_threads_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    go = Event()

    def slow(url: str, ca: object) -> tuple[str, bytes]:
        asked.append(url)
        go.wait(5)
        return url, url.encode()

    monkeypatch.setattr(debian_audit, "fetch_bytes", slow)
    fetch = debian_audit._fetch_once(None)
    with ThreadPoolExecutor(8) as pool:
        answers = [pool.submit(fetch, "http://m/Packages.xz") for _ in range(8)]
        go.set()
        assert {a.result() for a in answers} == {b"http://m/Packages.xz"}
    assert asked == ["http://m/Packages.xz"]
