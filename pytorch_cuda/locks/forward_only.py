"""Re-resolving a lock forward only, as Renovate's lock maintenance and a pin bump do.

- **Keep** (`build.py lock`, `bump`, `audit --fix`): a lock whose inputs are unchanged is not re-resolved at all, and
  a stale one is resolved with its committed versions as uv's preferences (the committed lock given as uv's
  `--output-file`, as pip-tools does): only what the new pins need moves, so a pytest bump moves pytest (and what
  pytest needs), not five unrelated transitive pins.
- **Upgrade** (`build.py lock --upgrade`, the monthly lock maintenance): every lock, the build-stage tools' too, is
  resolved afresh, each pin to the newest release the release-age gate admits.
- **Never back.** Either way a transitive pin never goes below its committed version. The gate (uv's
  `--exclude-newer`) hides a committed release younger than `min_release_age`, so a plain re-resolution would move
  it back (soupsieve 4.1.4 -> 4.1.3); such a pin is resolved again held at its committed version (a `==`
  constraint, and `--exclude-newer-package` for it alone: the gate cannot un-ship what is already locked). A
  direct pin of the requirements is matrix.yaml's to move, down too, and a lowered direct pin leaves the guard out
  (what it needs may have to go down with it).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from packaging.version import InvalidVersion, Version

from pytorch_cuda.errors import EngineError
from pytorch_cuda.locks.file_format import normalise, parse_lock
from pytorch_cuda.locks.writing import Resolver

_DIRECT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Start:
    """What a re-resolution starts from: the committed lock (None: none, or one from another index, whose versions
    say nothing about this one), whether its versions are uv's preferences (keep) or only a floor (upgrade), and
    the requirements' own == pins (matrix.yaml's to move)."""

    committed: Path | None
    keep: bool
    direct: Mapping[str, str]

    def floor(self) -> dict[str, str]:
        if self.committed is None:
            return {}
        return parse_lock(self.committed.read_text(encoding="utf-8")).versions()


@dataclass(frozen=True)
class Resolved:
    body: str  # uv's entries
    held: tuple[str, ...]  # "soupsieve 4.1.4": pins kept at their committed version, which the gate hides


def direct_pins(requirements: str) -> dict[str, str]:
    """The requirements' own `name==version` lines, by normalised name."""
    return {normalise(name): version for name, version in _DIRECT.findall(requirements)}


def start_of(path: Path, index: str, requirements: str, *, keep: bool) -> Start:
    """Where a lock's re-resolution starts: its committed file, when there is one from the same index."""
    committed = parse_lock(path.read_text(encoding="utf-8")) if path.exists() else None
    same = committed is not None and committed.index_url == index
    return Start(path if same else None, keep, direct_pins(requirements))


def downgrades(old: Mapping[str, str], new: Mapping[str, str], exempt: Mapping[str, str]) -> dict[str, str]:
    """The pins of `new` below their version in `old` (name -> the old version), the `exempt` ones left out."""
    found = {}
    for name, before in old.items():
        after = new.get(name)
        if after is None or name in exempt:
            continue
        try:
            if Version(after) < Version(before):
                found[name] = before
        except InvalidVersion:
            continue
    return found


def _lowered_direct(start: Start, floor: Mapping[str, str]) -> bool:
    """A direct pin set below the committed lock's: a deliberate downgrade, which the guard must not block."""
    return bool(downgrades(floor, start.direct, {}))


def ungated(names: list[str]) -> list[str]:
    """uv's flags that take these packages out of the release-age gate (each still pinned by an == of its own)."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [f"--exclude-newer-package={name}={now}" for name in sorted(names)]


def resolve_forward(
    resolver: Resolver, argv: list[str], what: str, *, index: str, start: Start, scratch: Path
) -> Resolved:
    """uv's resolution of `argv` (a `uv pip compile` line) that moves no transitive pin back from `start`'s lock."""
    scratch.mkdir(parents=True, exist_ok=True)
    if start.keep and start.committed is not None:
        preferences = scratch / "preferences.lock"  # uv reads it for preferences and writes its result over it
        shutil.copyfile(start.committed, preferences)
        output = ["--output-file", str(preferences.absolute())]  # uv prints it on stdout too
        argv = [arg for arg in argv if arg != "--quiet"] + output
    body = resolver.compile(argv, what, index=index)
    floor = start.floor()
    back = downgrades(floor, parse_lock(body).versions(), start.direct)
    if not back or _lowered_direct(start, floor):
        return Resolved(body, ())
    held = scratch / "held-at-committed.txt"
    held.write_text("".join(f"{name}=={version}\n" for name, version in sorted(back.items())), encoding="utf-8")
    extra = ["--constraint", str(held.absolute())]
    if resolver.cutoff(index) is not None:
        extra += ungated(list(back))
    names = ", ".join(f"{name} {version}" for name, version in sorted(back.items()))
    body = resolver.compile([*argv, *extra], f"{what}, holding {names} (never moved back)", index=index)
    still = downgrades(floor, parse_lock(body).versions(), start.direct)
    if still:
        raise EngineError(
            cause=f"uv moved {', '.join(sorted(still))} below the committed lock while resolving {what}",
            fix="report it: the committed versions are passed to uv as == constraints, so this should not happen",
        )
    return Resolved(body, tuple(f"{name} {version}" for name, version in sorted(back.items())))
