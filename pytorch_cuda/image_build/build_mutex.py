"""A mutex: one build of a variant at a time on this machine (an advisory flock on a file per variant).

A second build of the same variant refuses at once with a clear message instead of racing the
first one to the tags. The lock is released when the process ends, however it ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pytorch_cuda.errors import BuildBusyError


@contextlib.contextmanager
def variant_mutex(folder: Path, variant_key: str) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"build-{variant_key}.lock"
    handle = path.open("a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise BuildBusyError(
                cause=f"another build of {variant_key} is running on this machine ({holder}; lock file {path})",
                fix="wait for it to finish (its tags will be the result), or stop that build; a build that died "
                "releases the lock by itself",
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}, started {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
        handle.flush()
        yield path
        handle.seek(0)
        handle.truncate()  # released: no stale holder in the file
    finally:
        handle.close()
