"""A Debian archive on 127.0.0.1: `debian/dists/<suite>/main/binary-amd64/Packages.xz` for a suite and its
-updates, `debian-security/dists/<suite>-security/...` beside it, as deb.debian.org lays them out, served by
`python -m http.server`. What `build.py bump` reads to find newer Debian packages."""

from __future__ import annotations

import gzip
import hashlib
import io
import lzma
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.loopback_index import serve_folder, stop_server


def packages_index(packages: dict[str, str], architecture: str = "amd64") -> bytes:
    """A Packages file (deb822 paragraphs) listing `packages` (name -> version)."""
    paragraphs = [
        f"Package: {name}\nVersion: {version}\nArchitecture: {architecture}\nFilename: pool/main/{name}.deb\n"
        for name, version in packages.items()
    ]
    return "\n".join(paragraphs).encode()


def _plain(version: str) -> str:
    """A version as pool file names write it: without its epoch."""
    return version.partition(":")[2] or version


def _tar_xz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as archive:
        for name, data in files.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def _deb(package: str, changelog: str) -> bytes:
    """A .deb (ar: debian-binary, control.tar.xz, data.tar.xz) whose data holds the package's changelog."""
    members = {
        "debian-binary": b"2.0\n",
        "control.tar.xz": _tar_xz({"./control": f"Package: {package}\n".encode()}),
        "data.tar.xz": _tar_xz({f"./usr/share/doc/{package}/changelog.Debian.gz": gzip.compress(changelog.encode())}),
    }
    out = bytearray(b"!<arch>\n")
    for name, data in members.items():
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode() + data
        out += b"\n" if len(data) % 2 else b""
    return bytes(out)


@dataclass
class LoopbackArchive:
    root: Path
    suite: str = "trixie"
    port: int = 0
    server: subprocess.Popen[bytes] | None = None

    @property
    def mirror(self) -> str:
        return f"http://127.0.0.1:{self.port}/debian"

    def publish(self, suffix: str, packages: dict[str, str], architecture: str = "amd64") -> None:
        """Write the Packages.xz of suite+suffix ("", "-updates" or "-security")."""
        archive = "debian-security" if suffix == "-security" else "debian"
        folder = self.root / archive / "dists" / f"{self.suite}{suffix}" / "main" / "binary-amd64"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "Packages.xz").write_bytes(lzma.compress(packages_index(packages, architecture)))

    def publish_security_source(self, source: str, version: str, binaries: dict[str, str], changelog: str) -> None:
        """The -security suite with `binaries` built from `source` at `version`: their Packages.xz (naming the
        source and each binary's .deb, whose usr/share/doc/NAME/changelog.Debian.gz is `changelog`), its
        Sources.xz and, in the pool, the source's .debian.tar.xz with debian/changelog."""
        security = self.root / "debian-security"
        dists = security / "dists" / f"{self.suite}-security" / "main"
        directory = f"pool/updates/main/{source[0]}/{source}"
        (security / directory).mkdir(parents=True, exist_ok=True)
        paragraphs = []
        for binary, binary_version in binaries.items():
            deb = f"{directory}/{binary}_{_plain(binary_version)}_amd64.deb"
            (security / deb).write_bytes(_deb(binary, changelog))
            paragraphs.append(
                f"Package: {binary}\nSource: {source}\nVersion: {binary_version}\nArchitecture: amd64\n"
                f"Filename: {deb}\n"
            )
        (dists / "binary-amd64").mkdir(parents=True, exist_ok=True)
        (dists / "binary-amd64" / "Packages.xz").write_bytes(lzma.compress("\n".join(paragraphs).encode()))
        name = f"{source}_{_plain(version)}.debian.tar.xz"
        tarball = _tar_xz({"debian/changelog": changelog.encode()})
        (security / directory / name).write_bytes(tarball)
        paragraph = (
            f"Package: {source}\nVersion: {version}\nDirectory: {directory}\n"
            f"Checksums-Sha256:\n {hashlib.sha256(tarball).hexdigest()} {len(tarball)} {name}\n"
        )
        (dists / "source").mkdir(parents=True, exist_ok=True)
        (dists / "source" / "Sources.xz").write_bytes(lzma.compress(paragraph.encode()))

    def start(self) -> None:
        self.port, self.server = serve_folder(self.root, f"debian/dists/{self.suite}/")

    def stop(self) -> None:
        stop_server(self.server)
        self.server = None
