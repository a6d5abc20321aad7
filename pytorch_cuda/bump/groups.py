"""Pull-request groups, as Renovate's: each move of a bump is a patch, minor or major update (by the version parts
it changes; the triton, cuDNN and NCCL pins that a torch wheel drags along are in torch's group), and `bump --group
G` keeps only G's moves, so that each group can be its own pull request. The base's digest and Debian's updates go
with the patch group. The security lane's fixes are their own group already (security.yml, security/fixes)."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from packaging.version import Version

from pytorch_cuda.bump.bump_plan import BumpPlan, Move

Group = Literal["patch", "minor", "major"]
GROUPS: tuple[Group, ...] = ("patch", "minor", "major")
_DRAGGED = ("triton", "cudnn", "nccl")


def update_type(old: str, new: str) -> Group:
    before, after = (*Version(old).release, 0, 0), (*Version(new).release, 0, 0)
    if before[0] != after[0]:
        return "major"
    return "minor" if before[1] != after[1] else "patch"


def group_of(move: Move, plan: BumpPlan) -> Group:
    """The move's group; a pin a torch wheel drags along is in its torch's group."""
    if move.path[0] == "targets" and move.path[-1] in _DRAGGED:
        torch = next((m for m in plan.moved if m.path == (*move.path[:2], "torch")), None)
        if torch is not None:
            move = torch
    return update_type(move.resolution.old, move.resolution.new)


def only(plan: BumpPlan, group: Group) -> BumpPlan:
    """The plan with the other groups' moves left as they are (said in their `why`), for G's pull request."""
    moves = tuple(
        move
        if not move.resolution.moved or group_of(move, plan) == group
        else replace(
            move,
            resolution=replace(
                move.resolution,
                new=move.resolution.old,
                why=f"{group_of(move, plan)} update to {move.resolution.new}: the {group_of(move, plan)} group's",
            ),
        )
        for move in plan.moves
    )
    if group == "patch":
        return replace(plan, moves=moves)
    return replace(plan, moves=moves, bases=(), debian=())
