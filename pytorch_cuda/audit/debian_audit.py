"""The Debian half of `build.py audit`: each base's committed Debian package record (locks/debian_record.py)
against the base's -security suite, each security update's CVE/DSA ids from its source's changelog in the archive
(bump/debian_advisories.py), as findings beside pip-audit's."""

from __future__ import annotations

import lzma
import re
import tarfile
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from threading import Lock

from pytorch_cuda.audit.findings import Finding, debian_findings
from pytorch_cuda.audit.python_audit import FETCHES
from pytorch_cuda.bump.debian_advisories import advisory_ids
from pytorch_cuda.bump.debian_archive import DebianUpdate, check_bases
from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda.locks.debian_record import load_record
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.debian_suites import security_mirror
from pytorch_cuda.package_index.simple_index import fetch_bytes


def audit_debian(
    matrix: Matrix, root: Path, ca: Path | None, findings: list[Finding], log: Callable[[str], None]
) -> tuple[int, list[str]]:
    """Each base's recorded Debian packages against its archive's -security suite: the findings (with the CVE/DSA
    ids of each security update) appended to `findings`; the number of packages audited, and the notes."""
    count, notes = 0, []
    records = [load_record(root, name) for name in matrix.bases]
    names = frozenset(package for record in records if record for package in record.packages)
    checks = check_bases(
        matrix, root, recorded_only(lambda url: fetch_bytes(url, ca)[1], names), log, against="-security"
    )
    try:  # the loop's own steps raise no EngineError: a changelog that cannot be read is a note (_advisory_ids)
        for base in checks:
            if base.updates is None:
                notes.append(f"base {base.name}: no Debian package record ({base.where}); its packages are not audited")
                continue
            security = [u for u in base.updates if u.security]
            ids = _advisory_ids(security, security_mirror(str(base.bootstrap.mirror)), ca, notes)
            findings += debian_findings(base.updates, base.where, ids)
            count += base.packages
    except EngineError as exc:
        raise EngineError(
            cause=f"{exc.cause}; the Debian -security check needs the base's archive",
            fix="run audit where the mirror matrix.yaml names answers, or leave Debian out with --no-debian",
        ) from exc
    return count, notes


def recorded_only(fetch: Callable[[str], bytes], names: frozenset[str]) -> Callable[[str], bytes]:
    """`fetch`, but a Packages index comes back as the plain paragraphs of the `names` only: the archive check then
    parses 150 paragraphs, not trixie main's 60,000 (9.7 MB of xz, 10-40 s of parsing here, half of the audit's
    cold time). Anything else, or a page that is not xz, comes back as it was (the check names what is wrong)."""

    def fetch_recorded(url: str) -> bytes:
        page = fetch(url)
        if not url.endswith("/Packages.xz") or page[:6] != b"\xfd7zXZ\x00":
            return page
        try:
            text = lzma.decompress(page)
        except lzma.LZMAError:
            return page
        kept = [p for p in text.split(b"\n\n") if (found := _PACKAGE.search(p)) and found[1].decode() in names]
        return b"\n\n".join(kept) + b"\n"

    return fetch_recorded


_PACKAGE = re.compile(rb"^Package: (\S+)$", re.MULTILINE)


def _advisory_ids(
    updates: list[DebianUpdate], mirror: str, ca: Path | None, notes: list[str]
) -> dict[str, tuple[str, ...]]:
    """Each security update's CVE/DSA ids, from its changelog in the archive (a note where it cannot). The updates'
    .deb files are read side by side (network-bound); each page is fetched once, whoever asks for it first."""
    fetch = _fetch_once(ca)

    def ids_of(update: DebianUpdate) -> tuple[str, ...] | str:
        try:
            return advisory_ids(update, mirror, fetch)
        except (LookupError, UserError, ValueError, tarfile.TarError, lzma.LZMAError) as exc:
            why = exc.cause if isinstance(exc, UserError) else str(exc)
            return f"Debian {update.package} {update.new}: no CVE/DSA ids ({why})"

    with ThreadPoolExecutor(max_workers=FETCHES) as pool:
        answers = list(pool.map(ids_of, updates))
    found: dict[str, tuple[str, ...]] = {}
    for update, answer in zip(updates, answers, strict=True):
        if isinstance(answer, str):
            notes.append(answer)
        else:
            found[update.package] = answer
    return found


def _fetch_once(ca: Path | None) -> Callable[[str], bytes]:
    """fetch_bytes, each URL once across threads: the first asker fetches, the others wait for its answer."""
    lock = Lock()
    pages: dict[str, Future[bytes]] = {}

    def fetch(url: str) -> bytes:
        with lock:
            page = pages.get(url)
            mine = page is None
            if page is None:
                page = pages[url] = Future()
        if mine:
            try:
                page.set_result(fetch_bytes(url, ca)[1])
            except BaseException as exc:  # handed to every asker, raised there
                page.set_exception(exc)
        return page.result()

    return fetch
