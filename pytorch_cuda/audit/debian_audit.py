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
from pytorch_cuda.bump.debian_archive import DebianUpdate, check_bases
from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.debian_suites import security_mirror
from pytorch_cuda.package_index.simple_index import fetch_bytes


def audit_debian(
    matrix: Matrix, root: Path, ca: Path | None, findings: list[Finding], log: Callable[[str], None]
) -> tuple[int, list[str]]:
    """Each base's recorded Debian packages against its archive's -security suite: the findings (with the CVE/DSA
    ids of each security update) appended to `findings`; the number of packages audited, and the notes."""
    count, notes = 0, []
    checks = check_bases(matrix, root, lambda url: fetch_bytes(url, ca)[1], log, against="-security")
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
