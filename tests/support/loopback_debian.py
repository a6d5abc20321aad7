"""A Debian archive on 127.0.0.1: `debian/dists/<suite>/main/binary-amd64/Packages.xz` for a suite and its
-updates, `debian-security/dists/<suite>-security/...` beside it, as deb.debian.org lays them out, served by
`python -m http.server`. What `build.py bump` reads to find newer Debian packages."""

from __future__ import annotations

import lzma
import subprocess
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

    def start(self) -> None:
        self.port, self.server = serve_folder(self.root, f"debian/dists/{self.suite}/")

    def stop(self) -> None:
        stop_server(self.server)
        self.server = None
