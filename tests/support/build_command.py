"""`build.py` run as a user runs it: a child process of this Python, its output captured as text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]


def build_py(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python build.py ARGS...` from the checkout, with `env` on top of this process's environment."""
    return subprocess.run(
        [sys.executable, str(ROOT / "build.py"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
