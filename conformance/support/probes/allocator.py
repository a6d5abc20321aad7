"""Can this environment give memory statistics and CUDA graphs?  Measured, not read from settings.

PyTorch's caching allocator keeps the statistics behind ``torch.cuda.max_memory_allocated`` and the private
memory pools that CUDA graphs (torch.compile ``mode="max-autotune"`` / ``"reduce-overhead"``) allocate from.
With it disabled (``PYTORCH_NO_CUDA_MEMORY_CACHING=1``, used with compute-sanitizer) the statistics stay at 0
and graph capture fails: the measurements that need them are skipped with this reason, not failed.
"""

from __future__ import annotations

import os
from typing import Final

import torch

SETTINGS: Final = ("PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_CUDA_ALLOC_CONF")
PROBE_BYTES: Final = 1 << 20


def allocator_settings() -> str:
    shown = [f"{name}={os.environ[name]}" for name in SETTINGS if name in os.environ]
    return ", ".join(shown) or "no allocator variable set"


def memory_stats_missing(device: torch.device) -> str | None:
    """None when allocating 1 MiB shows up in ``memory_allocated``; otherwise why the statistics are missing."""
    before = torch.cuda.memory_allocated(device)
    probe = torch.empty(PROBE_BYTES, dtype=torch.uint8, device=device)
    grew = torch.cuda.memory_allocated(device) - before
    del probe
    if grew >= PROBE_BYTES:
        return None
    return (
        f"the CUDA caching allocator keeps no memory statistics here (a 1 MiB tensor changed "
        f"torch.cuda.memory_allocated by {grew} bytes; {allocator_settings()}): peak memory cannot be measured. "
        "Unset PYTORCH_NO_CUDA_MEMORY_CACHING to measure it"
    )


def cuda_graphs_unavailable(device: torch.device) -> str | None:
    """None when the caching allocator is active (CUDA graphs need its private pools); otherwise why not."""
    missing = memory_stats_missing(device)
    if missing is None:
        return None
    return (
        f"CUDA graphs need the caching allocator's private memory pools, and it is disabled ({allocator_settings()}): "
        "torch.compile modes that capture CUDA graphs cannot run. Unset PYTORCH_NO_CUDA_MEMORY_CACHING to measure them"
    )
