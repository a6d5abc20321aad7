"""Fault: DDP's fp16/bf16 gradient-compression hooks lose precision (the bucket rounded to fp8 e4m3 before it is
compressed, as a hook that silently picks a narrower wire format would). Replaces
torch.distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook and bf16_compress_hook, which the suite
(conformance/support/processes/dist_workers.py) and DDP users read from that module when they register the hook.
Runs at interpreter start, so the spawned rank processes (which inherit PYTHONPATH) get it too."""

import functools
from typing import Any

import torch
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks


def _rounded_to_fp8(hook: Any) -> Any:
    @functools.wraps(hook)  # keeps the name DDP checks (bf16_compress_hook) and the signature (state, bucket)
    def corrupted(state: Any, bucket: Any) -> Any:
        buffer = bucket.buffer()
        buffer.copy_(buffer.to(torch.float8_e4m3fn).to(buffer.dtype))
        return hook(state, bucket)

    return corrupted


default_hooks.fp16_compress_hook = _rounded_to_fp8(default_hooks.fp16_compress_hook)
default_hooks.bf16_compress_hook = _rounded_to_fp8(default_hooks.bf16_compress_hook)
