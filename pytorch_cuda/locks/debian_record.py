"""The Debian packages of a base's images, committed next to the locks: `images/debian-<base>.lock`.

The build records every Debian package of the image's system stage (the base plus the flavour's apt packages,
`dpkg-query`) in /etc/pytorch-cuda/base.json; `build.py bump --record-debian IMAGE` copies that record here, one
`package version` line each, so that `bump` can compare it with Debian's archive without an image or Docker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.image_folders import images_dir
from pytorch_cuda_contract.paths import BASE_RECORD_PATH

RECORD_HEADER = (
    "# The Debian packages (dpkg) of the {base} base's images, as the image {image} recorded them in {record}\n"
    "# (its base: {base_id}). Written by `build.py bump --record-debian IMAGE`; `build.py bump`\n"
    "# compares them with the Debian archive (docs/bump.md). Do not edit.\n"
)


class DebianRecordError(UserError):
    """The Debian package record cannot be read or written (exit status 2)."""


@dataclass(frozen=True)
class DebianRecord:
    base: str
    packages: Mapping[str, str]  # package -> version, as dpkg has it


def record_path(root: Path, base: str) -> Path:
    return images_dir(root) / f"debian-{base}.lock"


def is_debian_record(relative: Path) -> bool:
    """images/debian-*.lock: written by bump from a built image, not rendered."""
    return relative.parent == Path("images") and relative.name.startswith("debian-") and relative.suffix == ".lock"


def format_record(base: str, image: str, base_id: str, packages: Mapping[str, str]) -> str:
    header = RECORD_HEADER.format(base=base, image=image, base_id=base_id, record=BASE_RECORD_PATH)
    return header + "".join(f"{name} {packages[name]}\n" for name in sorted(packages))


def parse_record(text: str, where: str, base: str) -> DebianRecord:
    packages: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 2:
            raise DebianRecordError(
                cause=f"{where} line {number} is {line!r}, not `package version`",
                fix="write it again with `build.py bump --record-debian IMAGE` from an image built from this tree",
            )
        packages[fields[0]] = fields[1]
    return DebianRecord(base, packages)


def load_record(root: Path, base: str) -> DebianRecord | None:
    """The committed record of `base`, or None when there is none."""
    path = record_path(root, base)
    if not path.exists():
        return None
    return parse_record(path.read_text(encoding="utf-8"), str(path.relative_to(root)), base)
