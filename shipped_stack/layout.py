"""Where the carrier keeps things, here and there, and the names both sides share. Standard library only."""

from __future__ import annotations

from pathlib import Path
from typing import Final

PACKAGE_DIR: Final = Path(__file__).resolve().parent
CHECKOUT: Final = PACKAGE_DIR.parent
LOCKS_DIR: Final = PACKAGE_DIR / "locks"
VARIANT: Final = "cu128-runtime"  # the cu12 image: the variant README command 1 builds
HOST_PYTHON: Final = "3.12"  # the GPU hosts' python3
PYTHON_PLATFORM: Final = "x86_64-manylinux_2_28"

# Here: ignored by git; a part folder under SEND_DIR travels with one device call (`carry`).
WORK_DIR: Final = CHECKOUT / ".shipped-stack"
SEND_DIR: Final = WORK_DIR / "send"
# There: outside the checkout (the device machine keeps it while it is held), one folder per lock.
HOST_STORE: Final = Path("/var/tmp/pytorch-cuda-stack")
CURRENT_LINK: Final = HOST_STORE / "current"  # -> the venv of the last stack made there (gpu/common.sh reads it)

PARTS_INDEX: Final = "parts.json"  # in every part folder: every part's name, size and sha256
ZSTANDARD_LOCK: Final = "carrier.py312.lock"  # the one wheel the host side needs to read the pack


def stack_key(variant: str, lock_sha256: str) -> str:
    """The name of one pack here and of its store there: the variant and the first 16 hex digits of its lock."""
    return f"{variant}-{lock_sha256[:16]}"


def host_lock_path(variant: str = VARIANT) -> Path:
    return LOCKS_DIR / f"{variant}.py{HOST_PYTHON.replace('.', '')}.lock"


def image_lock_path(variant: str = VARIANT) -> Path:
    return CHECKOUT / "images" / variant / "requirements.lock"


def image_manifest_path(variant: str = VARIANT) -> Path:
    return CHECKOUT / "images" / variant / "manifest.json"
