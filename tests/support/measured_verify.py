"""`build.py release verify` as a child process, measured: its exit status, output, wall time and its own peak
resident memory (wait4's ru_maxrss for that child alone), for the Done-when bounds of issue 51 (memory asserted,
time only printed: timings are not asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.release_checkout import PASSPHRASE, Checkout


@dataclass(frozen=True)
class Measured:
    status: int
    stderr: str
    stdout: str
    peak_rss: int  # bytes, the child's maximum resident set (wait4's ru_maxrss)
    seconds: float


def measured_verify(checkout: Checkout, image: str, tmp_path: Path) -> Measured:
    """`build.py release verify IMAGE` as a child process, with its own peak RSS (wait4, not the shell's)."""
    out, err = tmp_path / "verify.out", tmp_path / "verify.err"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "verify-cache"), "RELEASE_KEY_PASSPHRASE": PASSPHRASE}
    started = time.monotonic()
    with out.open("w") as stdout, err.open("w") as stderr:
        child = subprocess.Popen([sys.executable, "build.py", "release", "verify", image],
                                 cwd=checkout.folder, env=env, stdout=stdout, stderr=stderr)  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    seconds = time.monotonic() - started
    return Measured(os.waitstatus_to_exitcode(status), err.read_text(), out.read_text(), usage.ru_maxrss * 1024,
                    seconds)  # fmt: skip
