"""Which checks run for the GPUs a run sees: a gpu/multigpu check skips with the reason when too few GPUs are
visible, and fails instead when the command line demands them (--require-gpu, --require-gpus N)."""

from __future__ import annotations

from functools import cache

import pytest


@cache
def visible_gpu_count() -> int:
    from conformance.support.probes.devices import gpu_count

    return gpu_count()


def required_gpus(config: pytest.Config) -> int:
    """The GPU count a run demands: ``--require-gpus N``, or 1 for ``--require-gpu``."""
    return max(int(config.getoption("require_gpus") or 0), 1 if config.getoption("require_gpu") else 0)


def gate_on_gpus(item: pytest.Item) -> None:
    """Skip or fail `item` (a check of the suite) when it needs more GPUs than are visible."""
    if item.get_closest_marker("multigpu") is not None:
        needed = 2
    elif item.get_closest_marker("gpu") is not None:
        needed = 1
    else:
        return
    found = visible_gpu_count()
    required = required_gpus(item.config)
    if found == 0:
        from conformance.support.probes.devices import no_gpu_reason

        if required:
            option = "--require-gpu" if required == 1 else f"--require-gpus {required}"
            pytest.fail(f"{option}: {no_gpu_reason()}", pytrace=False)
        pytest.skip(no_gpu_reason())
    if found < needed:
        if required >= needed:
            pytest.fail(f"--require-gpus {required}: needs >= {needed} GPUs, found {found}", pytrace=False)
        pytest.skip(f"needs >= {needed} GPUs, found {found}")
    if found < required:
        pytest.fail(f"--require-gpus {required}: only {found} GPU(s) visible", pytrace=False)
