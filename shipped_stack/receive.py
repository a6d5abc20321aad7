"""There (the GPU host): keep each carried part outside the checkout, check it, and once every part is there make
the venv. Standard library only, plus the `zstandard` wheel carried with the first part (the host has no zstd).

Every failure is one paragraph and exit status 3; nothing falls back to the host's own torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from pytorch_cuda_contract.carried_stack import MARKER, CarriedStack
from pytorch_cuda_contract.manifest import ManifestError, load_manifest
from shipped_stack.layout import CHECKOUT, CURRENT_LINK, HOST_STORE, PARTS_INDEX, image_manifest_path, stack_key

EXIT_RECEIVE: Final = 3
VERSIONS_CODE: Final = """
import json, sys, torch, triton
nccl = torch.cuda.nccl.version() if torch.cuda.is_available() else None
print(json.dumps({
    "python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda,
    "cudnn": torch.backends.cudnn.version(), "nccl": ".".join(map(str, nccl)) if nccl else None,
    "triton": triton.__version__, "torch_file": torch.__file__, "sys_path": sys.path,
}))
"""


class ReceiveError(Exception):
    """One paragraph: what is wrong with the carried stack and what to do."""


@dataclass(frozen=True)
class Received:
    store: Path
    have: tuple[str, ...]
    missing: tuple[str, ...]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(8 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _index(folder: Path) -> dict[str, object]:
    path = folder / PARTS_INDEX
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReceiveError(f"{path} cannot be read ({exc}): carry the part folder `plan` staged, whole") from exc
    if not isinstance(data, dict) or not isinstance(data.get("parts"), list):
        raise ReceiveError(f"{path} is not a parts index: carry the part folder `plan` staged, whole")
    return data


def _parts(index: dict[str, object]) -> list[dict[str, object]]:
    parts = index["parts"]
    assert isinstance(parts, list)
    return parts


def store_of(index: dict[str, object], base: Path = HOST_STORE) -> Path:
    return base / stack_key(str(index["variant"]), str(index["lock_sha256"]))


def receive(part_folder: Path, base: Path = HOST_STORE) -> Received:
    """Move the parts (and the carrier wheel) of `part_folder` into the store, each checked against the index."""
    index = _index(part_folder)
    store = store_of(index, base)
    (store / "parts").mkdir(parents=True, exist_ok=True)
    shutil.copy2(part_folder / PARTS_INDEX, store / PARTS_INDEX)
    if (part_folder / "carrier").is_dir():
        shutil.rmtree(store / "carrier", ignore_errors=True)
        shutil.copytree(part_folder / "carrier", store / "carrier")
    for part in _parts(index):
        carried = part_folder / str(part["name"])
        if not carried.exists():
            continue
        if _sha256(carried) != part["sha256"]:
            raise ReceiveError(
                f"part {part['name']} arrived corrupt (its sha256 is not the one parts.json names): send that part "
                "again (`python -m shipped_stack plan` prints its call)"
            )
        shutil.move(str(carried), store / "parts" / str(part["name"]))
    have: list[str] = []
    missing: list[str] = []
    for part in _parts(index):
        kept = store / "parts" / str(part["name"])
        (have if kept.exists() and kept.stat().st_size == part["bytes"] else missing).append(str(part["name"]))
    return Received(store, tuple(have), tuple(missing))


class _Concatenated:
    """The parts read one after another as one stream, each hashed as it is read (a bad part fails there)."""

    def __init__(self, store: Path, parts: list[dict[str, object]]) -> None:
        self._files: Iterator[tuple[Path, str]] = iter(
            (store / "parts" / str(p["name"]), str(p["sha256"])) for p in parts
        )
        self._handle: IO[bytes] | None = None
        self._digest = hashlib.sha256()
        self._expected = ""
        self._name = ""

    def _next(self) -> bool:
        if self._handle is not None:
            self._handle.close()
            if self._digest.hexdigest() != self._expected:
                raise ReceiveError(f"part {self._name} changed on disk since it was received: carry it again")
        try:
            path, self._expected = next(self._files)
        except StopIteration:
            self._handle = None
            return False
        self._handle, self._digest, self._name = path.open("rb"), hashlib.sha256(), path.name
        return True

    def read(self, size: int = -1) -> bytes:
        if self._handle is None and not self._next():
            return b""
        while True:
            assert self._handle is not None
            block = self._handle.read(size if size > 0 else 8 << 20)
            if block:
                self._digest.update(block)
                return block
            if not self._next():
                return b""


def _zstandard(store: Path) -> object:
    sys.path.insert(0, str(store / "carrier"))
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise ReceiveError(
            f"the carried zstandard wheel is not in {store / 'carrier'} ({exc}): send part 1 again (it carries it)"
        ) from exc
    return zstandard


def _manifest_facts() -> tuple[str, str]:
    """The image's Python and venv, from its manifest through the contract's one reader."""
    try:
        manifest = load_manifest(image_manifest_path())
    except ManifestError as exc:
        raise ReceiveError(
            f"the image's manifest cannot be read ({exc}): carry a checkout whose images/ is whole"
        ) from exc
    if manifest.python is None or manifest.venv is None:
        raise ReceiveError(f"{image_manifest_path()} names no Python or venv: render images/ again (build.py render)")
    return manifest.python, manifest.venv


def _installed(site: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for info in site.glob("*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        found[name.replace("_", "-").lower()] = version
    return found


def make_venv(store: Path, current: Path = CURRENT_LINK) -> Path:
    """Unpack the parts into a fresh venv (no system site-packages), write the marker, point `current` at it."""
    index = json.loads((store / PARTS_INDEX).read_text(encoding="utf-8"))
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    if python != index["python"]:
        raise ReceiveError(f"this host's python3 is {python}, the carried lock is for {index['python']}: run on 3.12")
    zstandard = _zstandard(store)
    prefix = store / "venv"
    shutil.rmtree(prefix, ignore_errors=True)
    started = time.monotonic()
    venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True, clear=True).create(prefix)
    site = prefix / "lib" / f"python{python}" / "site-packages"
    reader = zstandard.ZstdDecompressor(max_window_size=2 ** int(index["zstd_window_log"]))  # type: ignore[attr-defined]
    with (
        reader.stream_reader(_Concatenated(store, index["parts"])) as stream,
        tarfile.open(fileobj=stream, mode="r|") as tar,
    ):
        tar.extractall(site, filter="data")
    image_python, image_venv = _manifest_facts()
    marker = CarriedStack(
        variant=str(index["variant"]),
        lock=str(index["lock"]),
        lock_sha256=str(index["lock_sha256"]),
        root=str(store),
        prefix=str(prefix),
        python=python,
        image_python=image_python,
        image_venv=image_venv,
        packages=_installed(site),
    )
    (prefix / MARKER).write_text(json.dumps(marker.as_json(), indent=1) + "\n", encoding="utf-8")
    if current.is_symlink() or current.exists():
        current.unlink()
    current.symlink_to(prefix)
    print(f"shipped-stack: unpacked into {prefix} in {time.monotonic() - started:.1f} s", flush=True)
    return prefix


def versions(prefix: Path) -> dict[str, object]:
    """torch, CUDA, cuDNN, NCCL and Triton as the venv's Python sees them, with no PYTHONPATH and no user site;
    fails when torch comes from outside the venv or the venv's path holds a host package folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE")}
    result = subprocess.run(
        [str(prefix / "bin" / "python"), "-s", "-c", VERSIONS_CODE], capture_output=True, text=True, env=env
    )
    if result.returncode != 0:
        raise ReceiveError(f"the carried venv cannot import torch: {result.stderr.strip()[-1500:]}")
    seen: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    foreign = [p for p in seen["sys_path"] if "-packages" in str(p) and not str(p).startswith(str(prefix))]  # type: ignore[attr-defined]
    if not str(seen["torch_file"]).startswith(str(prefix)) or foreign:
        raise ReceiveError(f"the carried venv sees the host's packages ({seen['torch_file']}, {foreign})")
    return seen


def main(part_folder: str) -> int:
    try:
        received = receive(CHECKOUT / part_folder)
        print(
            f"shipped-stack: {len(received.have)} of {len(received.have) + len(received.missing)} parts here",
            flush=True,
        )
        if received.missing:
            shown = " ".join(received.missing[:8]) + (" ..." if len(received.missing) > 8 else "")
            print(f"shipped-stack: waiting for {len(received.missing)}: {shown}")
            return 0
        if not (received.store / "venv" / MARKER).exists():
            make_venv(received.store)
        seen = versions(received.store / "venv")
    except ReceiveError as exc:
        print(f"shipped-stack: {exc}", file=sys.stderr)
        return EXIT_RECEIVE
    ready = {k: seen[k] for k in ("python", "torch", "cuda", "cudnn", "nccl", "triton")}
    print(f"shipped-stack: ready at {received.store / 'venv'}: {json.dumps(ready)}")
    return 0


def print_versions() -> int:
    if not (CURRENT_LINK / MARKER).exists():
        print(
            f"shipped-stack: no carried stack on this host ({CURRENT_LINK} has no {MARKER}): carry it first "
            "(`python -m shipped_stack plan` here, then each call it prints)",
            file=sys.stderr,
        )
        return EXIT_RECEIVE
    try:
        seen = versions(CURRENT_LINK.resolve())
    except ReceiveError as exc:
        print(f"shipped-stack: {exc}", file=sys.stderr)
        return EXIT_RECEIVE
    print(json.dumps({k: seen[k] for k in ("python", "torch", "cuda", "cudnn", "nccl", "triton")}))
    return 0
