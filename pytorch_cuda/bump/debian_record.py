"""The Debian packages of a base's images, committed next to the locks: `images/debian-<base>.lock`.

The build records every Debian package of the image's system stage (the base plus the flavour's apt packages,
`dpkg-query`) in /etc/pytorch-cuda/base.json; `build.py bump --record-debian IMAGE` copies that record here, one
`package version` line each, so that `bump` can compare it with Debian's archive without an image or Docker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.engine.protocol import Engine
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda_contract.base_record import BaseRecordError, parse_base_record
from pytorch_cuda_contract.paths import BASE_RECORD_PATH

HEADER = (
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
    return root / "images" / f"debian-{base}.lock"


def is_debian_record(relative: Path) -> bool:
    """images/debian-*.lock: written by bump from a built image, not rendered."""
    return relative.parent == Path("images") and relative.name.startswith("debian-") and relative.suffix == ".lock"


def format_record(base: str, image: str, base_id: str, packages: Mapping[str, str]) -> str:
    header = HEADER.format(base=base, image=image, base_id=base_id, record=BASE_RECORD_PATH)
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


def record_from_image(engine: Engine, matrix: Matrix, image: str, root: Path) -> tuple[Path, int]:
    """Write images/debian-<base>.lock from `image`'s base record; (the file, how many packages)."""
    raw = engine.read_file(image, BASE_RECORD_PATH)
    fix = "name an image built by build.py from this tree (e.g. pytorch-cuda:v2.9), or build one first"
    if raw is None:
        raise DebianRecordError(cause=f"{image} has no {BASE_RECORD_PATH}", fix=fix)
    try:
        record = parse_base_record(raw, f"{image}'s {BASE_RECORD_PATH}")
    except BaseRecordError as exc:
        raise DebianRecordError(cause=f"{exc} (not a base record)", fix=fix) from exc
    names = [name for name, base in matrix.bases.items() if base.image == record.image]
    if not names or not record.dpkg:
        raise DebianRecordError(
            cause=f"{image} was built on {record.image}, which is no base of matrix.yaml, or it records no packages",
            fix=fix,
        )
    path = record_path(root, names[0])
    path.write_text(format_record(names[0], image, record.id, record.dpkg), encoding="utf-8")
    return path, len(record.dpkg)
