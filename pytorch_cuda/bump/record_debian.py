"""`build.py bump --record-debian IMAGE`: write images/debian-<base>.lock from a built image's base record (the
record's format is pytorch_cuda/locks/debian_record.py's)."""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda.engine.protocol import Engine
from pytorch_cuda.locks.debian_record import DebianRecordError, format_record, record_path
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda_contract.base_record import BaseRecordError, parse_base_record
from pytorch_cuda_contract.paths import BASE_RECORD_PATH


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
