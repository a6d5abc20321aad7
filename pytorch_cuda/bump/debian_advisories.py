"""The advisory ids of a Debian security update, from Debian's archive itself (its security tracker is not always
reachable): the -security suite's Packages index names the binary's source package, its Sources index the
source's files, and the source's debian/changelog (in its .debian.tar.xz) the CVE (and DSA/DLA) ids that each
upload fixed. The ids of the entries newer than the installed version and up to the update are the update's."""

from __future__ import annotations

import io
import lzma
import re
import tarfile
from collections.abc import Callable
from io import BytesIO

from debian.changelog import Changelog
from debian.deb822 import Packages, Sources
from debian.debian_support import Version

from pytorch_cuda.bump.debian_archive import DebianUpdate

Fetch = Callable[[str], bytes]  # URL -> body
_IDS = re.compile(r"\b(?:CVE-\d{4}-\d{4,}|D[SL]A-\d+-\d+)\b")


def _text(body: bytes) -> bytes:
    return lzma.decompress(body) if body[:6] == b"\xfd7zXZ\x00" else body


def _source_of(packages: bytes, update: DebianUpdate) -> tuple[str, str]:
    """(source package, source version) of the update's binary, from the suite's Packages index."""
    for paragraph in Packages.iter_paragraphs(BytesIO(_text(packages)), use_apt_pkg=False):
        if paragraph.get("Package") == update.package and paragraph.get("Version") == update.new:
            source, _, version = paragraph.get("Source", update.package).partition(" ")
            return source, version.strip("()") or update.new
    raise LookupError(f"{update.suite}'s Packages index has no {update.package} {update.new}")


def _debian_tar(sources: bytes, source: str, version: str) -> str:
    """The path (from the archive's root) of the source's .debian.tar.xz, from the suite's Sources index."""
    for paragraph in Sources.iter_paragraphs(BytesIO(_text(sources)), use_apt_pkg=False):
        if paragraph.get("Package") == source and paragraph.get("Version") == version:
            names = [f["name"] for f in paragraph.get("Files", []) if f["name"].endswith(".debian.tar.xz")]
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
    source, version = _source_of(fetch(f"{dists}/binary-amd64/Packages.xz"), update)
    tarball = fetch(f"{mirror}/{_debian_tar(fetch(f'{dists}/source/Sources.xz'), source, version)}")
    return fixed_ids(_changelog(tarball), update.old, update.new)
