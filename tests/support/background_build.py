"""build.py run in the background with its `--progress plain` read as it comes, and what that progress says."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Mapping, Sequence
from types import TracebackType

# The progress line of a build's first RUN step, apt-get with the apt cache mounts: a --no-cache build reaches it
# within seconds (its first wheel layer, after it, took 20-25 s more to reach).
FIRST_RUN_STEP = "id=apt-cache-"


class WatchedBuild:
    """build.py started with Popen; a reader thread keeps its stderr (the progress) and says when a line shows."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self._lines: list[str] = []
        self._stdout: list[str] = []
        self._marker = ""
        self._seen = threading.Event()
        # One reader per pipe, so neither fills while the test waits; wait() joins both before it answers.
        self._readers = [
            threading.Thread(target=self._read_progress, daemon=True),
            threading.Thread(target=self._read_stdout, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_progress(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._lines.append(line)
            if self._marker and self._marker in line:
                self._seen.set()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        self._stdout.extend(self.process.stdout)

    @property
    def progress(self) -> str:
        return "".join(self._lines)

    def wait_for(self, marker: str, timeout_s: float) -> None:
        """Return once `marker` shows in the progress (a line already read counts); fail after `timeout_s`."""
        self._marker = marker
        if marker in self.progress:
            self._seen.set()
        assert self._seen.wait(timeout_s), f"{marker!r} never showed in the progress:\n{self.progress[-2000:]}"
        assert self.process.poll() is None, f"build.py ended before the test could act:\n{self.progress[-2000:]}"

    def wait(self, timeout_s: float) -> int:
        """The exit status, once build.py has ended and both pipes are read to their end."""
        status = self.process.wait(timeout=timeout_s)
        for reader in self._readers:
            reader.join(timeout=30)
        return status

    @property
    def stdout(self) -> str:
        """What build.py printed on stdout (with --json, its answer)."""
        return "".join(self._stdout)

    def __enter__(self) -> WatchedBuild:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=60)


def rebuilt_run_steps(progress: str) -> list[str]:
    """RUN steps the plain progress shows started but not cached."""
    started = {line.removeprefix("[step] ") for line in progress.splitlines() if line.startswith("[step] ")}
    cached = {line.removeprefix("[cached] ") for line in progress.splitlines() if line.startswith("[cached] ")}
    return sorted(step for step in started - cached if "] RUN " in step)


def error_paragraph(progress: str) -> str:
    """build.py's closing error paragraph ("error: <cause>. Fix: <fix>."), its line breaks undone."""
    lines = progress.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("error: ")]
    assert starts, f"no error paragraph in:\n{progress[-2000:]}"
    return " ".join(" ".join(lines[starts[-1] :]).split())
