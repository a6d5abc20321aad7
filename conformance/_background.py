"""Probes started in a background subprocess at session start, collected by the checks that need them.

Only CPU work runs in the background: a GPU job would disturb the timed benchmarks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

SUITE_DIR: Final = Path(__file__).resolve().parent
CPU_COMPILE_PROBE: Final = SUITE_DIR / "_cpu_compile_probe.py"
TIMEOUT_S: Final = 300.0


class BackgroundProbe:
    def __init__(self, script: Path) -> None:
        self.script = script
        self.started = time.monotonic()
        self._result: dict[str, object] | None = None
        self.process: subprocess.Popen[str] | None = None
        try:
            self.process = subprocess.Popen(
                [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        except OSError as exc:
            self._result = {"error": f"cannot start {script.name}: {exc}"}

    def result(self) -> dict[str, object]:
        """The probe's JSON (waits for it); ``{"error": ...}`` when it crashed or hung."""
        if self._result is not None or self.process is None:
            return self._result or {"error": f"{self.script.name} was not started"}
        try:
            stdout, stderr = self.process.communicate(timeout=max(1.0, TIMEOUT_S - (time.monotonic() - self.started)))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            self._result = {"error": f"{self.script.name} did not finish within {TIMEOUT_S:.0f} s"}
            return self._result
        lines = stdout.strip().splitlines()
        try:
            parsed: dict[str, object] = json.loads(lines[-1]) if lines else {}
        except ValueError:
            parsed = {}
        if not parsed:
            parsed = {"error": f"{self.script.name} exited {self.process.returncode}: {stderr.strip()[-2000:]}"}
        parsed["wall_s"] = round(time.monotonic() - self.started, 2)
        self._result = parsed
        return parsed

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.communicate()
