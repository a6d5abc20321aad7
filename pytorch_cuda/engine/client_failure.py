"""A build that failed because its client did: the client was killed, or lost its connection to the daemon.

The client (`docker build` or `docker buildx build`) holds the BuildKit session with the daemon; when it
goes, the daemon cancels the build and tags nothing, and the steps that finished stay in the build cache.
"""

from __future__ import annotations

import re
import signal

from pytorch_cuda.errors import EngineError

_BUILDKIT_LINE = re.compile(r"^#\d+ ")  # a step's header or output; the client's own messages have no "#N"
_LOST_CONNECTION = re.compile(
    r"(Cannot connect to the Docker daemon|error during connect|rpc error: code = Unavailable|transport is closing|"
    r"error reading from server|unexpected EOF|connection reset by peer|broken pipe|"
    r"use of closed network connection|failed to dial gRPC)",
    re.IGNORECASE,
)
# Docker 20.10's client writes its bare "unexpected EOF" straight after a step's unfinished output line when its socket
# is cut ("#5 2.458 Reading package lists...unexpected EOF"): glued, with no ": " before it as in a step's own error.
_GLUED_TO_A_STEP = re.compile(r"(?<![\s:])(unexpected EOF)$", re.IGNORECASE)
_SHELL_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGSEGV, signal.SIGABRT})
BUILD_AGAIN = "build again: the steps that finished are in the build cache and do not run again"


def ended_by_signal(exit_code: int) -> signal.Signals | None:
    """The signal that ended the client: Popen's negative status, or 128+N where a shell stood between."""
    number = -exit_code if exit_code < 0 else exit_code - 128
    try:
        found = signal.Signals(number)
    except ValueError:
        return None
    return found if exit_code < 0 or found in _SHELL_SIGNALS else None


def killed_client(exit_code: int, client: str, step: str, where: str) -> EngineError | None:
    """The client died of a signal (SIGKILL from the OOM killer or a CI timeout, a `kill`), or None."""
    killed_by = ended_by_signal(exit_code)
    if killed_by is None:
        return None
    return _client_failure(
        client,
        f"was killed by signal {killed_by.value} ({killed_by.name})",
        step,
        f", before the build finished; its connection to the Docker daemon went with it, so the daemon cancelled "
        f"the build and no image was tagged{where}",
        fix=f"{BUILD_AGAIN}; if you did not stop it yourself, find what did (the kernel's OOM killer: `dmesg | grep -i "
        "oom`; a CI job's time limit) and give the build more memory or time",
    )


def lost_connection(log_text: str, client: str, step: str, where: str) -> EngineError | None:
    """The client lost its connection to the daemon (the daemon restarted or died, a proxy dropped it), or None."""
    own_lines = [line.strip() for line in log_text.splitlines() if line.strip() and not _BUILDKIT_LINE.match(line)]
    said = next((line for line in reversed(own_lines) if _LOST_CONNECTION.search(line)), None)
    if said is None:
        said = _glued_to_the_last_step_line(log_text)
    if said is None:
        return None
    return _client_failure(
        client,
        "lost its connection to the Docker daemon",
        step,
        f" ({said[:200]}), so the build stopped and no image was tagged{where}",
        fix="check that the engine is up (`docker info`; its log: `journalctl -u docker`: a restart, a crash, the "
        f"OOM killer) and, with a remote DOCKER_HOST, the network or SSH link to it; then {BUILD_AGAIN}",
    )


def _glued_to_the_last_step_line(log_text: str) -> str | None:
    """The client's own "unexpected EOF" written onto the end of the log's last line, a step's unfinished output."""
    last = log_text.rstrip().rsplit("\n", 1)[-1]
    glued = _GLUED_TO_A_STEP.search(last) if _BUILDKIT_LINE.match(last) else None
    return glued.group(1) if glued else None


def _client_failure(client: str, happened: str, step: str, then: str, fix: str) -> EngineError:
    during = f" during step {step}" if step else ""
    return EngineError(cause=f"the build client (`{client}`) {happened}{during}{then}", fix=fix)
