"""A package index on 127.0.0.1: a folder of small, real wheels served by `python -m http.server` as a
PEP 503 simple index, with PEP 592 yanking, Requires-Python and PEP 658 metadata files, like PyPI's; with
pep691=True also as PEP 691 JSON with PEP 700 upload times (tests/support/pep691_server.py), as PyPI serves
uv and `build.py bump`."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from pytorch_cuda.locks.file_format import normalise

PLATFORM_TAG = "cp313-cp313-manylinux_2_28_x86_64"
WHEEL = "Wheel-Version: 1.0\nGenerator: loopback\nRoot-Is-Purelib: true\nTag: {tag}\n"
LINUX = '; platform_system == "Linux" and platform_machine == "x86_64"'


@dataclass(frozen=True)
class Release:
    name: str
    version: str
    requires: tuple[str, ...] = ()
    tag: str = "py3-none-any"
    requires_python: str | None = None
    yanked: bool = False
    uploaded: str | None = None  # PEP 700 upload-time (ISO 8601, Z), served in the JSON pages (pep691=True)


def _metadata(release: Release) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {release.name}", f"Version: {release.version}"]
    lines += [f"Requires-Dist: {requirement}" for requirement in release.requires]
    if release.requires_python:
        lines.append(f"Requires-Python: {release.requires_python}")
    return "\n".join(lines) + "\n"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(folder: Path, release: Release) -> Path:
    """A valid wheel with a module and its dist-info (installable by pip and uv)."""
    stem = f"{normalise(release.name).replace('-', '_')}-{release.version}"
    path = folder / f"{stem}-{release.tag}.whl"
    info = f"{stem}.dist-info"
    files = {
        f"{normalise(release.name).replace('-', '_')}/__init__.py": f"__version__ = {release.version!r}\n".encode(),
        f"{info}/METADATA": _metadata(release).encode(),
        f"{info}/WHEEL": WHEEL.format(tag=release.tag).encode(),
    }
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    (folder / f"{path.name}.metadata").write_text(_metadata(release), encoding="utf-8")
    return path


@dataclass
class LoopbackIndex:
    """The folder: files/ holds the wheels, simple/<project>/index.html lists them."""

    root: Path
    releases: list[Release] = field(default_factory=list)
    port: int = 0
    server: subprocess.Popen[bytes] | None = None
    pep691: bool = False  # also serve PEP 691 JSON pages (with upload times) to a client that asks for them

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/simple"

    def publish(self, *releases: Release) -> None:
        """Add releases (a yanked one too) and rewrite the index pages."""
        self.releases += releases
        files = self.root / "files"
        files.mkdir(parents=True, exist_ok=True)
        projects: dict[str, list[str]] = {}
        entries: dict[str, list[dict[str, object]]] = {}
        for release in self.releases:
            wheel = build_wheel(files, release)
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            meta = hashlib.sha256((files / f"{wheel.name}.metadata").read_bytes()).hexdigest()
            attributes = f' data-dist-info-metadata="sha256={meta}" data-core-metadata="sha256={meta}"'
            if release.requires_python:
                attributes += f' data-requires-python="{html.escape(release.requires_python)}"'
            if release.yanked:
                attributes += ' data-yanked="broken build"'
            anchor = f'<a href="../../files/{wheel.name}#sha256={digest}"{attributes}>{wheel.name}</a><br>'
            projects.setdefault(normalise(release.name), []).append(anchor)
            entries.setdefault(normalise(release.name), []).append(_json_entry(release, wheel.name, digest, meta))
        for name, anchors in projects.items():
            page = self.root / "simple" / name / "index.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text("<!DOCTYPE html><html><body>\n" + "\n".join(anchors) + "\n</body></html>\n")
            if self.pep691:
                body = {"meta": {"api-version": "1.1"}, "name": name, "files": entries[name]}
                (page.parent / "index.json").write_text(json.dumps(body), encoding="utf-8")
        listing = "".join(f'<a href="{name}/">{name}</a><br>\n' for name in sorted(projects))
        (self.root / "simple" / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{listing}</body></html>\n")

    def start(self) -> None:
        server = [str(Path(__file__).with_name("pep691_server.py"))] if self.pep691 else ["-m", "http.server"]
        self.port, self.server = serve_folder(self.root, "simple/", server)

    def stop(self) -> None:
        stop_server(self.server)
        self.server = None


def _json_entry(release: Release, filename: str, digest: str, meta: str) -> dict[str, object]:
    """The file's entry in a PEP 691 page (PEP 700's upload-time where the release has one)."""
    entry: dict[str, object] = {
        "filename": filename,
        "url": f"../../files/{filename}",
        "hashes": {"sha256": digest},
        "core-metadata": {"sha256": meta},
        "requires-python": release.requires_python,
        "yanked": "broken build" if release.yanked else False,
    }
    if release.uploaded:
        entry["upload-time"] = release.uploaded
    return entry


def serve_folder(root: Path, probe_path: str, script: list[str] | None = None) -> tuple[int, subprocess.Popen[bytes]]:
    """An HTTP server (`python -m http.server`, or `script`) on a free port of 127.0.0.1 serving `root`, once it
    answers for `probe_path`."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    if script is None:
        argv = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    else:
        argv = [sys.executable, *script, str(port)]
    server = subprocess.Popen(argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/{probe_path}", timeout=2):
                return port, server
        except OSError:
            time.sleep(0.1)
    stop_server(server)
    raise RuntimeError(f"http.server did not answer on 127.0.0.1:{port} within 20 s")


def stop_server(server: subprocess.Popen[bytes] | None) -> None:
    if server is not None:
        server.terminate()
        server.wait(timeout=10)


def torch_release(version: str, triton: str, cudnn: str, nccl: str, *, yanked: bool = False) -> Release:
    """A torch wheel of a PyTorch index (2.9.2+cu128) that pins its CUDA wheels exactly, as the real one does."""
    requires = (f"triton=={triton}{LINUX}", f"nvidia-cudnn-cu12=={cudnn}{LINUX}", f"nvidia-nccl-cu12=={nccl}{LINUX}")
    return Release("torch", f"{version}+cu128", requires, tag=PLATFORM_TAG, yanked=yanked)
