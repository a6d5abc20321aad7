"""Size of /dev/shm, which DataLoader workers and NCCL use for shared memory."""

from __future__ import annotations

import os
from typing import Final

MIN_SHM_BYTES: Final = 1 << 30
SHM_PATH: Final = "/dev/shm"


def shm_size_bytes(path: str = SHM_PATH) -> int | None:
    try:
        stats = os.statvfs(path)
    except OSError:
        return None
    return stats.f_blocks * stats.f_frsize


def shm_problem(size: int | None, minimum: int = MIN_SHM_BYTES) -> str | None:
    """None when /dev/shm is big enough (a host-sized tmpfs, as with --ipc=host, is)."""
    if size is None:
        return f"{SHM_PATH} is missing: run the container with --shm-size=1g or --ipc=host"
    if size < minimum:
        return (
            f"{SHM_PATH} is {size / 2**20:.0f} MiB, below {minimum / 2**30:.0f} GiB: DataLoader workers and NCCL "
            "run out of shared memory; run the container with --shm-size=1g (or larger) or --ipc=host"
        )
    return None
