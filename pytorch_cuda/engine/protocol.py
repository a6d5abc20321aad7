"""The engine boundary. The pipeline talks only to this protocol; unit tests fake it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pytorch_cuda.retry import TransientError


@dataclass(frozen=True)
class EngineBuild:
    dockerfile: Path
    context: Path
    tag: str
    labels: Mapping[str, str]
    build_args: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, Path] = field(default_factory=dict)
    log_path: Path | None = None
    no_cache: bool = False
    # BuildKit cache in a registry (type=registry refs); only clients that can export it get them.
    cache_from: tuple[str, ...] = ()
    cache_to: tuple[str, ...] = ()
    # The commit's time, which the engine stamps on the image's config (its `created` and history), so that two
    # builds of one commit give one image ID (the files' time is the Dockerfile's SOURCE_DATE_EPOCH).
    created_epoch: int | None = None


@dataclass(frozen=True)
class BuildResult:
    image_id: str
    seconds: float
    cached_steps: int
    total_steps: int


@dataclass(frozen=True)
class RunRequest:
    """A command to run in an image, networkless; ``volumes`` maps named volumes to container paths, ``collect``
    names the container files to read back."""

    ref: str
    command: tuple[str, ...]
    shm_size: str
    timeout_s: float
    collect: tuple[str, ...] = ()
    volumes: Mapping[str, str] = field(default_factory=dict)
    environment: Mapping[str, str] = field(default_factory=dict)


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


@dataclass(frozen=True)
class PushResult:
    ref: str
    digest: str  # the manifest digest the registry now serves under ref ("sha256:...")
    layers: Mapping[
        str, str
    ]  # short layer ID -> its last status ("Pushed", "Layer already exists", "Mounted from ...")

    def count(self, prefix: str) -> int:
        return sum(status.startswith(prefix) for status in self.layers.values())


class RegistryError(Exception):
    """The registry (or the engine on its way there) refused a push or a lookup; retrying will not help."""


class TransientRegistryError(RegistryError, TransientError):
    """A push or lookup failed in a way another try may fix: a dropped connection, a timeout, a 5xx, a 429."""


class Engine(Protocol):
    def describe(self) -> str:
        """One line naming the engine (server version, storage driver, build client)."""

    def image_id(self, ref: str) -> str | None:
        """The image ID a reference points to, or None when it does not exist."""

    def image_size(self, ref: str) -> int: ...

    def image_labels(self, ref: str) -> dict[str, str]:
        """The labels of the image's config (an empty dict when it has none)."""
        ...

    def pull(self, ref: str) -> str | None:
        """Pull a reference; return None on success, or the reason it could not be pulled."""

    def import_rootfs(
        self, tarball: Path, ref: str, changes: Sequence[str], source_date_epoch: int | None = None
    ) -> str:
        """Import a root file system tarball as an image tagged ``ref``; returns its ID. With an epoch, the
        config's times are that epoch (not the import's wall clock): one tarball, one image ID."""

    def build(self, request: EngineBuild, on_progress: ProgressSink) -> BuildResult: ...

    def run(self, request: RunRequest) -> RunResult:
        """Run ``request.command`` in ``request.ref``, networkless, and read back the files it names."""
        ...

    def tag(self, image_id: str, ref: str) -> None: ...

    def untag(self, ref: str) -> None: ...

    def free_disk_bytes(self) -> int | None:
        """Free bytes on the engine's data root, when it can be known."""

    def read_file(self, ref: str, path: str) -> bytes | None:
        """A file of the image (from a created, never started container), or None when it has none there."""

    def push(self, ref: str, on_progress: Callable[[str], None]) -> PushResult:
        """Push a local tag to its registry; raises RegistryError (TransientRegistryError when worth a retry)."""

    def registry_digest(self, ref: str) -> str | None:
        """The digest the registry serves under ref, or None when it has no such tag (RegistryError otherwise)."""

    def image_differences(self, first: str, second: str) -> list[str]:
        """Lines naming the layers that differ between two images and their first differing files."""
        ...

    def layer_digests(self, image_id: str) -> list[str]:
        """The image's layers (their uncompressed digests, the config's rootfs.diff_ids), base first."""
        ...

    def build_cache_ids(self) -> frozenset[str]:
        """The IDs of the engine's build cache records now (to tell a later build's own records apart)."""
        ...

    def drop_build_cache(self, since: frozenset[str], dockerfile: Path) -> tuple[int, int]:
        """Remove the build cache records that a build of `dockerfile` made since `since` was taken (its RUN steps,
        never cache mounts or another build's records); returns (records removed, bytes reclaimed)."""
        ...

    def registry_cache_unsupported(self) -> str | None:
        """None when builds can export and import BuildKit cache to a registry; otherwise why not."""
