"""Here: stage one folder per device call (the carrier's zstandard first, then one part each, every folder with
the parts index) and say each call's command and carry. Every folder is staged at once, so that the calls can go back to
back: the device machine is given back 30 s after a reply, and the parts it kept go with it."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytorch_cuda.errors import UserError
from shipped_stack.layout import CHECKOUT, PARTS_INDEX, SEND_DIR
from shipped_stack.pack import PackIndex

CALL_LIMIT_BYTES: Final = 64 << 20  # what one device call carries: the checkout and the carried paths together


@dataclass(frozen=True)
class Call:
    number: int
    carry: str  # the folder, relative to the checkout
    command: str
    travelling_bytes: int


def checkout_bytes(root: Path = CHECKOUT) -> int:
    """What travels with every call besides the carried paths: tracked and untracked, not ignored, files."""
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    return sum(_disk_bytes(root / name.decode()) for name in listed if name and (root / name.decode()).is_file())


def _disk_bytes(path: Path) -> int:
    """A file's size as the device tool counts it: its disk blocks where those are more than its bytes (a call
    the bytes put at 63.2 MiB was refused as over 64 MiB; the checkout's 1,400 small files take 22 MiB of blocks
    for 19 MiB of bytes)."""
    status = path.stat()
    return max(status.st_size, status.st_blocks * 512)


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def stage(
    index: PackIndex, packed: Path, send_dir: Path = SEND_DIR, checkout: Path = CHECKOUT, limit: int = CALL_LIMIT_BYTES
) -> list[Call]:
    """One folder per part of `packed` under `send_dir`; fails (one paragraph) when a call would carry more than
    `limit` (the checkout's own files travel with every call)."""
    shutil.rmtree(send_dir, ignore_errors=True)
    base = checkout_bytes(checkout)
    calls: list[Call] = []
    folders = [("carrier", None), *((f"part-{n:03d}", part) for n, part in enumerate(index.parts, start=1))]
    for number, (name, part) in enumerate(folders):
        folder = send_dir / name
        folder.mkdir(parents=True)
        shutil.copy2(packed / PARTS_INDEX, folder / PARTS_INDEX)
        if part is None:  # the zstandard the host needs to read the parts: a call of its own (about 11 MiB)
            shutil.copytree(packed / "carrier", folder / "carrier")
        else:
            _link(packed / part.name, folder / part.name)
        size = base + sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        if size > limit:
            raise UserError(
                cause=f"call {number} would carry {size / 2**20:.1f} MiB (the checkout {base / 2**20:.1f} MiB and "
                f"its {name}), over the {limit / 2**20:.0f} MiB one device call takes",
                fix="pack again with smaller parts (`python -m shipped_stack pack --part-mib N`)",
            )
        carry = str(folder.relative_to(checkout))
        calls.append(Call(number, carry, f"python3 -m shipped_stack receive {carry}", size))
    return calls
