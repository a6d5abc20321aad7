"""The bump of a whole matrix: for each selected target, torch (and the pins it drags along), then every
Python package pin, resolved on the targets' own indexes within the policy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from packaging.version import Version

from pytorch_cuda.bump.base_digest import BaseMove
from pytorch_cuda.bump.bump_policy import Policy
from pytorch_cuda.bump.debian_archive import DebianUpdate
from pytorch_cuda.bump.matrix_edit import set_scalar
from pytorch_cuda.bump.resolver import Resolution, resolve
from pytorch_cuda.bump.torch_pins import torch_pins
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.file_format import PYPI_INDEX
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.pinned_base import pin_text
from pytorch_cuda.package_index.release_age import gated_source, newer_than
from pytorch_cuda.package_index.simple_index import FileSource, IndexFile

PinSource = Callable[[list[IndexFile], str, str, str | None, str], dict[str, str]]


@dataclass(frozen=True)
class Move:
    """One pin of matrix.yaml: where it is, and what the policy makes of it."""

    path: tuple[str, ...]
    resolution: Resolution

    @property
    def where(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True)
class TargetCheck:
    """One target of the run: its index, and why it was not checked (its index unreachable), if it was not."""

    target: str
    index: str
    unreachable: str | None = None


@dataclass(frozen=True)
class BumpPlan:
    moves: tuple[Move, ...]
    targets: tuple[TargetCheck, ...] = ()
    bases: tuple[BaseMove, ...] = ()  # registry bases pinned by digest
    notes: tuple[str, ...] = ()  # one line for each base with nothing to refresh or no Debian record
    debian: tuple[DebianUpdate, ...] = ()  # newer Debian packages than the images were built with

    @property
    def rebuild_needed(self) -> bool:
        """A pin or a base digest moves, or Debian's archive has a newer package than the images carry."""
        return bool(self.moved or self.moved_bases or self.debian)

    @property
    def partial(self) -> bool:
        """A target's index could not be read: the target is left out, the rest of the plan stands."""
        return any(t.unreachable for t in self.targets)

    @property
    def moved_bases(self) -> list[BaseMove]:
        return [base for base in self.bases if base.moved]

    @property
    def moved(self) -> list[Move]:
        return [move for move in self.moves if move.resolution.moved]

    @property
    def held_back(self) -> list[Move]:
        return [move for move in self.moves if move.resolution.held_back]

    def rewrite(self, text: str) -> str:
        """matrix.yaml's text with every moved pin set to its new version."""
        for move in self.moved:
            text = set_scalar(text, move.path, move.resolution.new)
        for base in self.moved_bases:
            text, _ = pin_text(text, base.base, base.new, f"what {base.upstream_tag} served", by="build.py bump")
            if base.new_upstream != base.old_upstream:
                text = set_scalar(text, ("bases", base.base, "upstream"), base.new_upstream)
        return text


def _local(index: str, local_version: str) -> str | None:
    """PyPI's torch has no local label; the PyTorch indexes' carry the target's (2.9.1+cu126)."""
    return None if index == PYPI_INDEX else local_version


def _torch_moves(matrix: Matrix, name: str, policy: Policy, files: FileSource, pins: PinSource) -> list[Move]:
    target, python = matrix.targets[name], matrix.bases[matrix.default_base].python
    index = str(target.index).rstrip("/")
    torch_files = files(index, "torch")
    local = _local(index, target.local_version)
    torch = resolve("torch", target.torch, policy.torch, torch_files, python=python, local=local)
    moves = [Move(("targets", name, "torch"), torch)]
    if torch.moved:
        new = pins(torch_files, torch.new, python, local, target.wheel_family)
        old = {"triton": target.triton, "cudnn": target.cudnn, "nccl": target.nccl}
        why = f"pinned exactly by torch {torch.new}"
        moves += [
            Move(("targets", name, key), Resolution(key, old[key], new[key], why, None, ()))
            for key in ("triton", "cudnn", "nccl")
        ]
    return moves


def _package_pins(matrix: Matrix) -> list[tuple[tuple[str, ...], str, str]]:
    """(path, name, version) of every Python package pin: the shared ones, then each flavour's."""
    found: list[tuple[tuple[str, ...], str, str]] = [
        (("python_packages", name), name, version) for name, version in matrix.python_packages.items()
    ]
    for flavour_name, flavour in matrix.flavours.items():
        found += [
            (("flavours", flavour_name, "python_packages", name), name, version)
            for name, version in flavour.python_packages.items()
        ]
    return found


def _on_every_index(results: list[Resolution]) -> Resolution:
    """A shared pin moves only as far as every selected target's index allows."""
    lowest = min(results, key=lambda r: Version(r.new))
    held = [r.held_back for r in results if r.held_back]
    waiting = sorted({v for r in results for v in r.too_new}, key=Version)
    return replace(lowest, held_back=max(held, key=Version) if held else None, too_new=tuple(waiting))


def _index(matrix: Matrix, name: str) -> str:
    return str(matrix.targets[name].index).rstrip("/")


def plan_bump(
    matrix: Matrix,
    policy: Policy,
    targets: list[str],
    files: FileSource,
    pins: PinSource,
    *,
    log: Callable[[str], None] = lambda _: None,
    now: datetime | None = None,
) -> BumpPlan:
    """What bump would move on these targets (canonical names); nothing is written. A target whose index cannot
    be read is marked unreachable (with the reason) and left out; the others go on. None reachable: the error."""
    failed: dict[str, UserError] = {}
    moves: list[Move] = []
    files, young = gated_source(files, policy.min_release_age, now or datetime.now(UTC))
    for name in targets:
        log(f"target {name}: torch on {_index(matrix, name)}")
        try:
            torch_moves = _torch_moves(matrix, name, policy, files, pins)
            waiting = newer_than(young.get((_index(matrix, name), "torch"), ()), matrix.targets[name].torch)
            moves += [replace(torch_moves[0], resolution=replace(torch_moves[0].resolution, too_new=waiting))]
            moves += torch_moves[1:]
        except UserError as error:
            failed[name] = error
            log(f"target {name}: left out: {error.cause}")
    python = matrix.bases[matrix.default_base].python
    reachable = sorted({_index(matrix, t) for t in targets if t not in failed})
    log(f"{len(_package_pins(matrix))} package pins on {', '.join(reachable) or 'no reachable index'}")
    for path, name, version in _package_pins(matrix):
        results = []
        for index in sorted({_index(matrix, t) for t in targets if t not in failed}):
            try:
                found = resolve(name, version, policy.rule_for(name), files(index, name), python=python)
                results.append(replace(found, too_new=newer_than(young.get((index, name), ()), version)))
            except UserError as error:
                failed.update({t: error for t in targets if _index(matrix, t) == index and t not in failed})
                log(f"{index}: left out: {error.cause}")
        if len(failed) == len(targets):
            raise next(iter(failed.values()))
        moves.append(Move(path, _on_every_index(results)))
    if len(failed) == len(targets):
        raise next(iter(failed.values()))
    kept = [m for m in moves if not (m.path[0] == "targets" and m.path[1] in failed)]
    checks = tuple(TargetCheck(t, _index(matrix, t), failed[t].cause if t in failed else None) for t in targets)
    return BumpPlan(tuple(kept), targets=checks)


def network_sources(ca: Path | None) -> tuple[FileSource, PinSource]:
    """The real index: each project page fetched once per run."""
    from pytorch_cuda.package_index.simple_index import project_files

    cache: dict[tuple[str, str], list[IndexFile]] = {}

    def files(index: str, name: str) -> list[IndexFile]:
        if (index, name) not in cache:
            cache[index, name] = project_files(index, name, ca)
        return cache[index, name]

    def pins(found: list[IndexFile], version: str, python: str, local: str | None, family: str) -> dict[str, str]:
        return torch_pins(found, version, python=python, local=local, wheel_family=family, ca=ca)

    return files, pins
