"""Pull-request groups, as Renovate's: each move of a bump is a security fix (it moves a pin past a version that
an advisory of `build.py audit --json` names as fixed), or else a patch, minor or major update (by the version
parts it changes). The triton, cuDNN and NCCL pins that a torch wheel drags along are in torch's group; the
base's digests go with patch; Debian's newer packages, which one rebuild takes all at once, go with security when
any is from -security, else with patch. `only(plan, G)` keeps G's moves, so each group is its own pull request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from pytorch_cuda.bump.bump_plan import BumpPlan, Move
from pytorch_cuda.errors import UserError

Group = Literal["security", "major", "minor", "patch"]
GROUPS: tuple[Group, ...] = ("security", "major", "minor", "patch")  # a security fix is one whatever its size
_DRAGGED = ("triton", "cudnn", "nccl")


@dataclass(frozen=True)
class PinAdvisory:
    """An advisory against a pinned version of a Python package, and the versions that fix it."""

    package: str
    version: str
    id: str
    fixed: tuple[str, ...]

    def fixed_by(self, name: str, old: str, new: str) -> bool:
        """Moving `name` from `old` to `new` leaves this advisory behind."""
        if canonicalize_name(name) != canonicalize_name(self.package) or old != self.version:
            return False
        try:
            return any(Version(old) < Version(fix) <= Version(new) for fix in self.fixed)
        except InvalidVersion:
            return False


def advisories_from(audit: Mapping[str, Any]) -> tuple[PinAdvisory, ...]:
    """The Python advisories with a fix of an audit's JSON (`build.py audit --json`)."""
    try:
        return tuple(
            PinAdvisory(str(f["package"]), str(f["version"]), str(f["id"]), tuple(str(v) for v in f["fix_versions"]))
            for f in audit["findings"]
            if f["ecosystem"] == "pypi" and f["fix_versions"]
        )
    except (KeyError, TypeError) as error:
        raise UserError(
            cause=f"the audit's JSON has no findings in `build.py audit --json`'s shape (missing {error})",
            fix="pass the output of `build.py audit --json` to --advisories",
        ) from None


def update_type(old: str, new: str) -> Group:
    before, after = (*Version(old).release, 0, 0), (*Version(new).release, 0, 0)
    if before[0] != after[0]:
        return "major"
    return "minor" if before[1] != after[1] else "patch"


def _leader(move: Move, plan: BumpPlan) -> Move:
    """The move that decides this one's group: its torch for a pin that a torch wheel drags along."""
    if move.path[0] == "targets" and move.path[-1] in _DRAGGED:
        return next((m for m in plan.moved if m.path == (*move.path[:2], "torch")), move)
    return move


def fixes(move: Move, plan: BumpPlan, advisories: Sequence[PinAdvisory]) -> tuple[str, ...]:
    """The ids of the advisories that this move (or the torch move that drags it) leaves behind."""
    r = _leader(move, plan).resolution
    return tuple(a.id for a in advisories if r.moved and a.fixed_by(r.name, r.old, r.new))


def group_of(move: Move, plan: BumpPlan, advisories: Sequence[PinAdvisory] = ()) -> Group:
    """The move's group: security when it fixes an advisory, else its (or its torch's) update type."""
    if fixes(move, plan, advisories):
        return "security"
    leader = _leader(move, plan).resolution
    return update_type(leader.old, leader.new)


def debian_group(plan: BumpPlan) -> Group:
    """Where Debian's newer packages go: one rebuild takes them all, so one group has them all."""
    return "security" if any(update.security for update in plan.debian) else "patch"


def only(plan: BumpPlan, group: Group, advisories: Sequence[PinAdvisory] = ()) -> BumpPlan:
    """The plan with the other groups' moves left as they are (said in their `why`), for G's pull request."""

    def kept(move: Move) -> Move:
        other = group_of(move, plan, advisories)
        if not move.resolution.moved or other == group:
            return move
        why = f"{other} update to {move.resolution.new}: the {other} group's"
        return replace(move, resolution=replace(move.resolution, new=move.resolution.old, why=why))

    moves = tuple(kept(move) for move in plan.moves)
    return replace(
        plan,
        moves=moves,
        bases=plan.bases if group == "patch" else (),
        debian=plan.debian if debian_group(plan) == group else (),
    )
