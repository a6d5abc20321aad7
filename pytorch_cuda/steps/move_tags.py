"""Move tags from a checked candidate to the full tag and the aliases, all or nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytorch_cuda.engine.protocol import Engine
from pytorch_cuda.errors import EngineError


@dataclass(frozen=True)
class TagMove:
    ref: str
    previous_id: str | None
    new_id: str


def move_tags(engine: Engine, image_id: str, refs: Sequence[str]) -> list[TagMove]:
    """Point every ref at image_id. If any move fails, every ref goes back to where it pointed."""
    moves: list[TagMove] = []
    try:
        for ref in refs:
            previous = engine.image_id(ref)
            engine.tag(image_id, ref)
            moves.append(TagMove(ref, previous, image_id))
    except KeyboardInterrupt:
        roll_back(engine, moves)  # Ctrl-C between two tags: put the moved ones back, then stop
        raise
    except Exception as exc:
        roll_back(engine, moves)
        raise EngineError(
            cause=f"moving the tag {ref} failed ({exc}); every tag was put back where it was",
            fix="check the engine (`docker info`) and its free disk, then run the build again; layers are cached",
        ) from exc
    return moves


def roll_back(engine: Engine, moves: Sequence[TagMove]) -> None:
    """Point each moved ref back where it was (or drop it where it was new), last move first."""
    for move in reversed(moves):
        if move.previous_id is None:
            engine.untag(move.ref)
        else:
            engine.tag(move.previous_id, move.ref)
