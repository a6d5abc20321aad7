"""Parse BuildKit's plain progress output into progress events: steps, cache hits, logs, errors."""

from __future__ import annotations

import re
import threading

from pytorch_cuda.engine.protocol import ProgressEvent

_LINE = re.compile(r"^#(?P<id>\d+) (?P<rest>.*)$")
_TIMED = re.compile(r"^\d+\.\d+ (?P<text>.*)$")
_EXPORT_STEPS = frozenset({"exporting to image", "exporting to docker image format", "exporting to oci image format"})


class BuildKitParser:
    """Turns `--progress=plain` lines into ProgressEvents."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def feed(self, line: str) -> ProgressEvent | None:
        match = _LINE.match(line.rstrip("\n"))
        if not match:
            return ProgressEvent("log", "", line.rstrip("\n")) if line.strip() else None
        step_id, rest = match.group("id"), match.group("rest")
        if rest.startswith("[") or rest in _EXPORT_STEPS:
            self._names[step_id] = rest
            return ProgressEvent("step", rest)
        name = self._names.get(step_id, f"#{step_id}")
        if rest.startswith("DONE"):
            return ProgressEvent("done", name, rest.removeprefix("DONE ").strip())
        if rest == "CACHED":
            return ProgressEvent("cached", name)
        if rest.startswith("ERROR"):
            return ProgressEvent("error", name, rest.removeprefix("ERROR").lstrip(": "))
        timed = _TIMED.match(rest)
        if timed:
            return ProgressEvent("log", name, timed.group("text"))
        return None


class RunningSteps:
    """The steps BuildKit has started and not yet finished (it runs independent stages side by side), so a
    heartbeat can name the step that has been running longest, with its own time rather than the build's."""

    def __init__(self) -> None:
        self._started: dict[str, float] = {}
        self._lock = threading.Lock()  # the build's reader thread observes, the heartbeat thread asks

    def observe(self, event: ProgressEvent, now: float) -> None:
        with self._lock:
            if event.kind == "step" and "[internal]" not in event.step:
                self._started.setdefault(event.step, now)
            elif event.kind in ("done", "cached", "error"):
                self._started.pop(event.step, None)

    def longest(self, now: float) -> tuple[str, float] | None:
        """The longest-running unfinished step and its seconds so far; None between steps."""
        with self._lock:
            if not self._started:
                return None
            step, since = min(self._started.items(), key=lambda item: item[1])
        return step, now - since


def minutes(seconds: float) -> str:
    """``0m42s``, ``12m05s``: a heartbeat's durations."""
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60:02d}s"


_BOUND_LOCK = re.compile(r"source=(images/[^,\s]+\.lock)")
_STEP_HEAD = re.compile(r"^(\[[^\]]+\] [A-Z]+)")


def bound_lock(step: str) -> str | None:
    """The lock file a RUN step bind-mounts and installs from (images/.../layer-1-nvidia.lock), if any."""
    match = _BOUND_LOCK.search(step)
    return match.group(1) if match else None


def short_step(step: str, width: int = 100) -> str:
    """A step's name for a message: "[image  3/19] RUN (installs images/x/layer-2-torch.lock)", or cut short."""
    flat = " ".join(step.split())
    lock, head = bound_lock(flat), _STEP_HEAD.match(flat)
    if lock and head:
        return f"{head.group(1)} (installs {lock})"
    return flat if len(flat) <= width else flat[: width - 3] + "..."
