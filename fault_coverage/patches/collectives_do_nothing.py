"""Fault: torch.distributed's all_reduce, all_gather, all_gather_into_tensor, reduce_scatter and reduce_scatter_tensor
return at once without touching a tensor (with async_op=True: an already-completed Work), as a wrapper that stubs out
the collectives can (a 'single-process' shim, a mocking helper left in a site package, a backend that reports success
without communicating). Runs at interpreter start, so the spawned rank processes (which inherit PYTHONPATH) get it
too. DDP's own C++ reducer is not affected; its Python compression hooks (which call dist.all_reduce) are."""

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d
from torch._C._distributed_c10d import _create_work_from_future

NAMES = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor")


def _does_nothing(*args: object, async_op: bool = False, **_kwargs: object) -> object:
    if not async_op:
        return None
    future: torch.futures.Future[object] = torch.futures.Future()
    future.set_result(list(args[:1]))  # the untouched tensor, as a finished all_reduce's future holds it
    return _create_work_from_future(future)


for _name in NAMES:
    for _module in (dist, c10d):
        if hasattr(_module, _name):
            setattr(_module, _name, _does_nothing)
