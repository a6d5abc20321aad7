"""Size of /dev/shm, which DataLoader workers and NCCL use for shared memory."""

from __future__ import annotations

import os
from typing import Final

MIN_SHM_BYTES: Final = 1 << 30
SHM_PATH: Final = "/dev/shm"
# The one advice, for the banner and the suite alike: the size the suite's check asks for, or the host's own.
SHM_FIX: Final = "run the container with --ipc=host or --shm-size=1g (or larger)"


def shm_size_bytes(path: str = SHM_PATH) -> int | None:
    try:
        stats = os.statvfs(path)
    except OSError:
        return None
    return stats.f_blocks * stats.f_frsize


def shm_problem(size: int | None, minimum: int = MIN_SHM_BYTES) -> str | None:
    """None when /dev/shm is big enough (a host-sized tmpfs, as with --ipc=host, is)."""
    if size is None:
        return f"{SHM_PATH} is missing: {SHM_FIX}"
    if size < minimum:
        return (
            f"{SHM_PATH} is {size / 2**20:.0f} MiB, below {minimum / 2**30:.0f} GiB: DataLoader workers and NCCL "
            f"run out of shared memory; {SHM_FIX}"
        )
    return None
