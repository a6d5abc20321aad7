"""Parse BuildKit's plain progress output into progress events: steps, cache hits, logs, errors."""

from __future__ import annotations

import re

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
