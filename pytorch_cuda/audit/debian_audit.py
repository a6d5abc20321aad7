"""The Debian half of `build.py audit`: each base's committed Debian package record (locks/debian_record.py)
against the base's -security suite, each security update's CVE/DSA ids from its source's changelog in the archive
(bump/debian_advisories.py), as findings beside pip-audit's."""

from __future__ import annotations

import lzma
import tarfile
from collections.abc import Callable
from pathlib import Path

from pytorch_cuda.audit.findings import Finding, debian_findings
from pytorch_cuda.bump.debian_advisories import advisory_ids
from pytorch_cuda.bump.debian_archive import DebianUpdate, check_archive
from pytorch_cuda.bump.simple_index import fetch_bytes
from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda.locks.debian_record import load_record, record_path
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.debian_suites import security_mirror


def audit_debian(
    matrix: Matrix, root: Path, ca: Path | None, findings: list[Finding], log: Callable[[str], None]
) -> tuple[int, list[str]]:
    """Each base's recorded Debian packages against its archive's -security suite: the findings (with the CVE/DSA
    ids of each security update) appended to `findings`; the number of packages audited, and the notes."""
    count, notes = 0, []
    for name, base in matrix.bases.items():
        record = load_record(root, name)
        where = str(record_path(root, name).relative_to(root))
        if record is None:
            notes.append(f"base {name}: no Debian package record ({where}); its packages are not audited")
            continue
        log(f"base {name}: {len(record.packages)} Debian packages against {base.bootstrap.mirror}-security")
        try:
            updates = check_archive(record, base.bootstrap, lambda url: fetch_bytes(url, ca)[1])
        except EngineError as exc:
            raise EngineError(
                cause=f"{exc.cause}; the Debian -security check needs the base's archive",
                fix="run audit where the mirror matrix.yaml names answers, or leave Debian out with --no-debian",
            ) from exc
        ids = _advisory_ids([u for u in updates if u.security], security_mirror(str(base.bootstrap.mirror)), ca, notes)
        findings += debian_findings(updates, where, ids)
        count += len(record.packages)
    return count, notes


def _advisory_ids(
    updates: list[DebianUpdate], mirror: str, ca: Path | None, notes: list[str]
) -> dict[str, tuple[str, ...]]:
    """Each security update's CVE/DSA ids, from its source's changelog in the archive (a note where it cannot)."""
    pages: dict[str, bytes] = {}

    def fetch(url: str) -> bytes:
        if url not in pages:
            pages[url] = fetch_bytes(url, ca)[1]
        return pages[url]

    found: dict[str, tuple[str, ...]] = {}
    for update in updates:
        try:
            found[update.package] = advisory_ids(update, mirror, fetch)
        except (LookupError, UserError, ValueError, tarfile.TarError, lzma.LZMAError) as exc:
            why = exc.cause if isinstance(exc, UserError) else str(exc)
            notes.append(f"Debian {update.package} {update.new}: no CVE/DSA ids ({why})")
    return found
