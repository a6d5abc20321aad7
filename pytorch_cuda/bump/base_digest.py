"""The base image's digest pin: where matrix.yaml's base comes from a registry (`upstream:`) and is pinned
(`digest:`, its image ID: the sha256 of its config), bump reads what the upstream tag serves now and moves the
pin within the policy (`policy: {base: follow}`); a base bootstrapped here (no pin) has nothing to refresh."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytorch_cuda.bump.bump_policy import Policy
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.bases import Base
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.references import parse_reference

# (tag reference) -> (manifest digest the tag serves, image ID of its linux/amd64 image): oci.image_config.resolve_tag
TagResolver = Callable[[str], tuple[str, str]]


@dataclass(frozen=True)
class BaseMove:
    """A base's pins now and on the registry: `digest:` (image ID) and the upstream's `@sha256:`, if it has one."""

    base: str
    upstream_tag: str
    old: str
    new: str
    old_upstream: str
    new_upstream: str
    why: str
    held_back: bool  # the policy keeps the pin (base: pinned) though the tag moved

    @property
    def moved(self) -> bool:
        return self.new != self.old and not self.held_back


def plan_bases(matrix: Matrix, policy: Policy, resolve: TagResolver) -> tuple[list[BaseMove], list[str]]:
    """Each pinned registry base's move (or hold), and one line for each base with nothing to refresh."""
    moves: list[BaseMove] = []
    notes: list[str] = []
    for name, base in matrix.bases.items():
        if base.digest is None or base.upstream is None:
            notes.append(_unpinned(name, base))
            continue
        upstream = parse_reference(base.upstream)
        tag = f"{upstream.repository}:{upstream.tag or 'latest'}"
        try:
            manifest, image_id = resolve(tag)
        except UserError as error:
            raise type(error)(cause=f"base {name}: {error.cause}", fix=error.fix) from error
        new_upstream = f"{tag}@{manifest}" if upstream.digest else base.upstream
        held = policy.base == "pinned" and image_id != base.digest
        why = "policy base: pinned" if held else f"policy base: follow ({tag} serves it now)"
        moves.append(BaseMove(name, tag, base.digest, image_id, base.upstream, new_upstream, why, held))
    return moves, notes


def _unpinned(name: str, base: Base) -> str:
    if base.digest is None:
        return (
            f"base {name}: no `digest:` pin in matrix.yaml ({base.image} is bootstrapped here with "
            f"{base.bootstrap.tool} or taken as found), so there is no registry digest to refresh"
        )
    return f"base {name}: pinned to {base.digest} with no `upstream:` registry, so there is no tag to follow"
