"""The advisory ids of a Debian security update, from Debian's archive itself (its security tracker is not always
reachable): the changelog of the update names the CVE (and DSA/DLA) ids each upload fixed, and the ids of the
entries newer than the installed version, up to the update, are the update's. The changelog is read from the
binary package the -security suite's Packages index points at (usr/share/doc/PACKAGE/changelog.Debian.gz), else
from its source (the Sources index's .debian.tar.xz: debian/changelog)."""

from __future__ import annotations

import gzip
import io
import lzma
import re
import tarfile
from collections.abc import Callable, Mapping
from io import BytesIO

from debian.changelog import Changelog
from debian.deb822 import Packages, Sources
from debian.debian_support import Version

from pytorch_cuda.bump.debian_archive import DebianUpdate
from pytorch_cuda.errors import UserError

Fetch = Callable[[str], bytes]  # URL -> body
_IDS = re.compile(r"\b(?:CVE-\d{4}-\d{4,}|D[SL]A-\d+-\d+)\b")


def _text(body: bytes) -> bytes:
    return lzma.decompress(body) if body[:6] == b"\xfd7zXZ\x00" else body


def _paragraph(packages: bytes, update: DebianUpdate) -> Mapping[str, str]:
    """The update's binary in the suite's Packages index."""
    for paragraph in Packages.iter_paragraphs(BytesIO(_text(packages)), use_apt_pkg=False):
        if paragraph.get("Package") == update.package and paragraph.get("Version") == update.new:
            return paragraph
    raise LookupError(f"{update.suite}'s Packages index has no {update.package} {update.new}")


def _source_of(paragraph: Mapping[str, str], update: DebianUpdate) -> tuple[str, str]:
    """(source package, source version) of the update's binary."""
    source, _, version = paragraph.get("Source", update.package).partition(" ")
    return source, version.strip("()") or update.new


def _ar_member(deb: bytes, prefix: str) -> bytes:
    """A member of a .deb (an ar archive) whose name starts with `prefix` (data.tar.xz)."""
    if not deb.startswith(b"!<arch>\n"):
        raise LookupError("the .deb is not an ar archive")
    position = 8
    while position + 60 <= len(deb):
        name, size = deb[position : position + 16].decode().strip().rstrip("/"), int(deb[position + 48 : position + 58])
        if name.startswith(prefix):
            return deb[position + 60 : position + 60 + size]
        position += 60 + size + size % 2
    raise LookupError(f"the .deb has no {prefix}*")


def _binary_changelog(deb: bytes, package: str) -> str:
    data = _ar_member(deb, "data.tar")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        member = archive.extractfile(f"./usr/share/doc/{package}/changelog.Debian.gz")
        if member is None:
            raise LookupError(f"the .deb of {package} has no changelog.Debian.gz (its doc folder is another's)")
        return gzip.decompress(member.read()).decode("utf-8", errors="replace")


def _debian_tar(sources: bytes, source: str, version: str) -> str:
    """The path (from the archive's root) of the source's .debian.tar.xz, from the suite's Sources index."""
    for paragraph in Sources.iter_paragraphs(BytesIO(_text(sources)), use_apt_pkg=False):
        if paragraph.get("Package") == source and paragraph.get("Version") == version:
            listed = paragraph.get("Checksums-Sha256") or paragraph.get("Files") or []  # today's, then the old
            names = [f["name"] for f in listed if f["name"].endswith(".debian.tar.xz")]
            if names:
                return f"{paragraph['Directory']}/{names[0]}"
    raise LookupError(f"{update_text(source, version)} has no .debian.tar.xz in the Sources index")


def update_text(source: str, version: str) -> str:
    return f"source {source} {version}"


def _changelog(tarball: bytes) -> str:
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:xz") as archive:
        member = archive.extractfile("debian/changelog")
        if member is None:
            raise LookupError("the .debian.tar.xz has no debian/changelog")
        return member.read().decode("utf-8", errors="replace")


def fixed_ids(changelog: str, installed: str, update: str) -> tuple[str, ...]:
    """The CVE, DSA and DLA ids of the changelog's entries newer than `installed`, up to `update`."""
    low, high = Version(installed), Version(update)
    found: list[str] = []
    for block in Changelog(changelog, strict=False):
        if block.version is not None and low < Version(str(block.version)) <= high:
            found += _IDS.findall("\n".join(block.changes()))
    return tuple(dict.fromkeys(found))


def advisory_ids(update: DebianUpdate, mirror: str, fetch: Fetch) -> tuple[str, ...]:
    """The ids the update fixes; LookupError (or the fetch's error) when the archive cannot say."""
    dists = f"{mirror}/dists/{update.suite}/main"
    paragraph = _paragraph(fetch(f"{dists}/binary-amd64/Packages.xz"), update)
    try:
        changelog = _binary_changelog(fetch(f"{mirror}/{paragraph['Filename']}"), update.package)
    except (LookupError, KeyError, UserError, tarfile.TarError):
        source, version = _source_of(paragraph, update)
        changelog = _changelog(fetch(f"{mirror}/{_debian_tar(fetch(f'{dists}/source/Sources.xz'), source, version)}"))
    return fixed_ids(changelog, update.old, update.new)
