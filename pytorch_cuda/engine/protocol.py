"""The engine boundary. The pipeline talks only to this protocol; unit tests fake it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class BuildRequest:
    dockerfile: Path
    context: Path
    tag: str
    labels: Mapping[str, str]
    build_args: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, Path] = field(default_factory=dict)
    log_path: Path | None = None
    no_cache: bool = False


@dataclass(frozen=True)
class BuildResult:
    image_id: str
    seconds: float
    cached_steps: int
    total_steps: int


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    output: str
    files: Mapping[str, bytes]
    timed_out: bool = False


@dataclass(frozen=True)
class ProgressEvent:
    """One line of build progress: a step started, finished, was cached, or printed output."""

    kind: str  # "step", "done", "cached", "log", "error", "tick" (a heartbeat during long steps)
    step: str
    text: str = ""


ProgressSink = Callable[[ProgressEvent], None]


class Engine(Protocol):
    def describe(self) -> str:
        """One line naming the engine (server version, storage driver, build client)."""

    def image_id(self, ref: str) -> str | None:
        """The image ID a reference points to, or None when it does not exist."""

    def image_size(self, ref: str) -> int: ...

    def pull(self, ref: str) -> str | None:
        """Pull a reference; return None on success, or the reason it could not be pulled."""

    def import_rootfs(self, tarball: Path, ref: str, changes: Sequence[str]) -> str:
        """Import a root file system tarball as an image tagged ``ref``; returns its ID."""

    def build(self, request: BuildRequest, on_progress: ProgressSink) -> BuildResult: ...

    def run(
        self,
        ref: str,
        command: Sequence[str],
        *,
        shm_size: str,
        timeout_s: float,
        collect: Sequence[str] = (),
    ) -> RunResult: ...

    def tag(self, image_id: str, ref: str) -> None: ...

    def untag(self, ref: str) -> None: ...

    def free_disk_bytes(self) -> int | None:
        """Free bytes on the engine's data root, when it can be known."""
