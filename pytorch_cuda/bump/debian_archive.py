"""Debian's archive against the recorded packages: the newest version of each installed package in the base's
suite, its -updates and its -security (`dists/<suite>/main/binary-amd64/Packages.xz`), in Debian's own
version order (python-debian). A newer one means the image should be rebuilt; from -security, all the more."""

from __future__ import annotations

import lzma
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from debian.deb822 import Packages
from debian.debian_support import Version

from pytorch_cuda.errors import EngineError
from pytorch_cuda.locks.debian_record import DebianRecord, load_record, record_path
from pytorch_cuda.matrix.bases import Bootstrap
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.debian_suites import Suite, base_suites

DEBIAN_ARCHITECTURES = ("amd64", "all")
Fetch = Callable[[str], bytes]  # URL -> body


@dataclass(frozen=True)
class DebianUpdate:
    package: str
    old: str
    new: str
    suite: str
    security: bool

    @property
    def line(self) -> str:
        kind = "Debian security update" if self.security else f"Debian update ({self.suite})"
        return f"rebuild: {kind} {self.package} {self.old} -> {self.new}"


def index_url(suite: Suite, component: str) -> str:
    return f"{suite.mirror}/dists/{suite.name}/{component}/binary-amd64/Packages.xz"


def newest(index: bytes, wanted: Iterable[str]) -> dict[str, Version]:
    """The newest version of each `wanted` package in one Packages index (xz-compressed or plain)."""
    names = set(wanted)
    text = lzma.decompress(index) if index[:6] == b"\xfd7zXZ\x00" else index
    found: dict[str, Version] = {}
    for paragraph in Packages.iter_paragraphs(BytesIO(text), use_apt_pkg=False, fields=_FIELDS):
        name = paragraph.get("Package", "")
        if name not in names or paragraph.get("Architecture") not in DEBIAN_ARCHITECTURES:
            continue
        version = Version(paragraph["Version"])
        if name not in found or version > found[name]:
            found[name] = version
    return found


_FIELDS = ["Package", "Version", "Architecture"]


def updates(installed: Mapping[str, str], archive: Mapping[Suite, Mapping[str, Version]]) -> list[DebianUpdate]:
    """Each installed package that a suite has newer: the newest version, and whether -security has it."""
    found: list[DebianUpdate] = []
    for package, version in sorted(installed.items()):
        current = Version(version)
        offers = [(v, suite) for suite, index in archive.items() if (v := index.get(package)) and v > current]
        if not offers:
            continue
        best = max(v for v, _ in offers)
        from_suites = [suite for v, suite in offers if v == best]
        security = [suite for suite in from_suites if suite.security]
        suite = (security or from_suites)[0]
        found.append(DebianUpdate(package, version, str(best), suite.name, bool(security)))
    return found


def check_archive(record: DebianRecord, bootstrap: Bootstrap, fetch: Fetch) -> list[DebianUpdate]:
    """The recorded packages against the base's three suites (each of its components)."""
    archive: dict[Suite, Mapping[str, Version]] = {}
    for suite in base_suites(bootstrap):
        found: dict[str, Version] = {}
        for component in bootstrap.components or ("main",):
            url = index_url(suite, component)
            try:
                index = newest(fetch(url), record.packages)
            except (lzma.LZMAError, ValueError, KeyError) as exc:
                raise EngineError(
                    cause=f"{url} is not a Debian Packages index ({type(exc).__name__}: {exc})",
                    fix="check the base's bootstrap mirror in matrix.yaml (bump reads <mirror>/dists and "
                    "<mirror>-security/dists)",
                ) from exc
            found |= {name: v for name, v in index.items() if name not in found or v > found[name]}
        archive[suite] = found
    return updates(record.packages, archive)


@dataclass(frozen=True)
class BaseCheck:
    """One base of matrix.yaml against Debian's archive: its committed Debian package record (`where`, relative to
    the checkout), how many packages it names, and what the archive has newer; `updates` is None where no record
    is committed (nothing was checked)."""

    name: str
    bootstrap: Bootstrap
    where: str
    packages: int
    updates: tuple[DebianUpdate, ...] | None


def check_bases(
    matrix: Matrix, root: Path, fetch: Fetch, log: Callable[[str], None], *, against: str = ""
) -> Iterator[BaseCheck]:
    """Each base's committed record against its archive, one base at a time (bump's plan and audit's findings):
    logged before its archive is read (`against`: what the line says after the mirror, e.g. "-security")."""
    for name, base in matrix.bases.items():
        record = load_record(root, name)
        where = str(record_path(root, name).relative_to(root))
        if record is None:
            yield BaseCheck(name, base.bootstrap, where, 0, None)
            continue
        log(f"base {name}: {len(record.packages)} Debian packages against {base.bootstrap.mirror}{against}")
        found = check_archive(record, base.bootstrap, fetch)
        yield BaseCheck(name, base.bootstrap, where, len(record.packages), tuple(found))
