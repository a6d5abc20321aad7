"""What each spawned rank is asked to do: a plain, picklable description."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DistJob:
    tasks: tuple[str, ...]
    backend: str  # "nccl" or "gloo"
    world_size: int
    port: int
    out_dir: str
    timeout_s: float
