"""A Debian archive on 127.0.0.1: `debian/dists/<suite>/main/binary-amd64/Packages.xz` for a suite and its
-updates, `debian-security/dists/<suite>-security/...` beside it, as deb.debian.org lays them out, served by
`python -m http.server`. What `build.py bump` reads to find newer Debian packages."""

from __future__ import annotations

import hashlib
import io
import lzma
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.loopback_index import serve_folder, stop_server


def packages_index(packages: dict[str, str], architecture: str = "amd64", source: str = "") -> bytes:
    """A Packages file (deb822 paragraphs) listing `packages` (name -> version), built from `source` if given."""
    origin = f"Source: {source}\n" if source else ""
    paragraphs = [
        f"Package: {name}\n{origin}Version: {version}\nArchitecture: {architecture}\nFilename: pool/main/{name}.deb\n"
        for name, version in packages.items()
    ]
    return "\n".join(paragraphs).encode()


def _debian_tar(changelog: str) -> bytes:
    """A source package's .debian.tar.xz holding debian/changelog."""
    data = changelog.encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as archive:
        member = tarfile.TarInfo("debian/changelog")
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


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
        source), its Sources.xz and, in the pool, the source's .debian.tar.xz with `changelog`."""
        dists = self.root / "debian-security" / "dists" / f"{self.suite}-security" / "main"
        (dists / "binary-amd64").mkdir(parents=True, exist_ok=True)
        (dists / "binary-amd64" / "Packages.xz").write_bytes(lzma.compress(packages_index(binaries, source=source)))
        directory = f"pool/updates/main/{source[0]}/{source}"
        name = f"{source}_{version.partition(':')[2] or version}.debian.tar.xz"
        tarball = _debian_tar(changelog)
        (self.root / "debian-security" / directory).mkdir(parents=True, exist_ok=True)
        (self.root / "debian-security" / directory / name).write_bytes(tarball)
        digest = hashlib.md5(tarball).hexdigest()
        paragraph = (
            f"Package: {source}\nVersion: {version}\nDirectory: {directory}\nFiles:\n {digest} {len(tarball)} {name}\n"
        )
        (dists / "source").mkdir(parents=True, exist_ok=True)
        (dists / "source" / "Sources.xz").write_bytes(lzma.compress(paragraph.encode()))

    def start(self) -> None:
        self.port, self.server = serve_folder(self.root, f"debian/dists/{self.suite}/")

    def stop(self) -> None:
        stop_server(self.server)
        self.server = None
