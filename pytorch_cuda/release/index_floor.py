"""The rollback floor of the release index, committed in the checkout beside its root (keys/release-index-floor.json):
the lowest targets and snapshot versions any index may carry, and the targets.json that the floor's release bound.

Where it lives and who moves it: in git, so only a reviewed commit moves it, never a registry writer; it is raised
by `build.py release record-floor` after a release (never lowered: a lower floor is refused), and committed.
Every reader of the index enforces it, on a machine with no cache too: `verify`, `sign`, `refresh-index` and
`promote`. Between commits each machine also keeps the versions it saw or wrote (index_client.py's cache), which
only rise. An absent file is the floor 0: no index refused by it (a repository that has not released yet).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from pytorch_cuda.errors import UserError

FLOOR_NAME = "release-index-floor.json"


class FloorFileError(UserError):
    """The committed floor is malformed, names another repository, or would be lowered. Exit status 2."""


@dataclass(frozen=True)
class Floor:
    repository: str
    targets_version: int = 0
    snapshot_version: int = 0
    targets_sha256: str = ""  # the bytes of the floor's targets.json (empty: not recorded)


def floor_path(root_path: Path) -> Path:
    return root_path.with_name(FLOOR_NAME)


def load_floor(path: Path, repository: str) -> Floor:
    """The committed floor for `repository`; the floor 0 when there is no file."""
    try:
        document = json.loads(path.read_text())
        floor = Floor(
            str(document["repository"]),
            int(document["targets_version"]),
            int(document["snapshot_version"]),
            str(document.get("targets_sha256", "")),
        )
    except FileNotFoundError:
        return Floor(repository)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FloorFileError(
            cause=f"the release index's rollback floor {path} is not readable ({type(exc).__name__}: {exc})",
            fix="restore it from git; `build.py release record-floor` writes it from the verified index",
        ) from exc
    if floor.repository != repository:
        raise FloorFileError(
            cause=f"the rollback floor {path} is for {floor.repository}, not {repository}",
            fix="restore this repository's floor from git (`build.py release record-floor` writes it)",
        )
    return floor


def write_floor(path: Path, floor: Floor) -> Floor:
    """Raise the committed floor to `floor`; refused when that would lower either version."""
    current = load_floor(path, floor.repository)
    if floor.targets_version < current.targets_version or floor.snapshot_version < current.snapshot_version:
        raise FloorFileError(
            cause=f"the verified index (targets v{floor.targets_version}, snapshot v{floor.snapshot_version}) is "
            f"below the committed floor {path} (targets v{current.targets_version}, snapshot "
            f"v{current.snapshot_version}): the floor is never lowered",
            fix="the registry serves an older index than the one recorded: a rollback; restore the newer index "
            "and record again",
        )
    temporary = path.with_name(f".{path.name}.new")
    temporary.write_text(json.dumps(asdict(floor), indent=2) + "\n")
    os.replace(temporary, path)
    return floor
