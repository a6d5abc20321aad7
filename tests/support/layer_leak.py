"""Which layer directories of the engine hold files of a given time: what a build at that time left on the disk.

Docker 20.10 (BuildKit 0.8) keeps the directory of a rebuilt layer that equals one its layer store holds: the
store keeps its first copy, and the second build's snapshot directory under <data root>/overlay2 is referenced by
nothing, freed neither by removing the image nor by pruning every build cache record (measured: a 1 MB layer
rebuilt identically beside its first left its directory; built, removed with its records, then built again,
none). --verify-reproducible-apart builds at a file time no other build uses (matrix.yaml's plus one second), so
every directory that still holds a file of that time once the pair and its records are gone was left behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import docker


def overlay_root(client: docker.DockerClient) -> Path | None:
    """The engine's overlay2 folder, where this process can read it (a local engine, as root); else None."""
    overlay = Path(str(client.info().get("DockerRootDir") or "/var/lib/docker")) / "overlay2"
    return overlay if overlay.is_dir() and os.access(overlay, os.R_OK | os.X_OK) else None


def layer_dirs_holding(overlay: Path, mtime: int, depth: int = 6) -> list[str]:
    """The layer directories whose diff holds an entry with this mtime within `depth` levels of its top (every
    layer a RUN ending in clamp-mtimes makes has one: the files it made, or the folders it changed)."""
    found = []
    for layer in sorted(overlay.iterdir()):
        diff = layer / "diff"
        if _holds(diff, mtime, depth):
            found.append(layer.name)
    return found


def _holds(folder: Path, mtime: int, depth: int) -> bool:
    try:
        entries = list(os.scandir(folder))
    except OSError:  # gone meanwhile (another build's), or not a folder
        return False
    for entry in entries:
        try:
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if int(stat.st_mtime) == mtime:
            return True
        if depth > 1 and entry.is_dir(follow_symlinks=False) and _holds(Path(entry.path), mtime, depth - 1):
            return True
    return False
