"""Which checks run for the GPUs a run sees. A run that selects any gpu/multigpu check (no -m, `-m gpu`, `-k amp`,
a path or a node id: whatever the selection) and sees no GPU at all stops before any test with one paragraph (exit
status 4); only a selection without a GPU check (`-m cpu`) runs without one. With a GPU, a multigpu check skips
with the reason when too few are visible, and fails instead when the command line demands them (--require-gpus N)."""

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


# A run whose selection holds a GPU check, whatever selected it, checks the GPU: without one it stops with this
# status (pytest's usage error, as for an unwritable --conformance-json) instead of skipping every GPU check and
# passing. A nightly `-m gpu` job on a runner whose GPU did not come up is red, not green.
NO_GPU_EXIT_STATUS = 4


def no_gpu_paragraph(gpu_checks: int, facts: dict[str, str]) -> str:
    """The one paragraph a run that selects GPU checks stops with when no GPU is visible (pure: ``facts`` is what
    was looked for, from ``no_gpu_facts``)."""
    looked = "; ".join(f"{what}: {found}" for what, found in facts.items())
    return (
        f"no GPU is visible, and this run selects {gpu_checks} GPU checks: it stops here (exit status "
        f"{NO_GPU_EXIT_STATUS}) rather than skip them and pass. Looked for: {looked}. "
        "Pass a GPU: `docker run --gpus all IMAGE conformance` (the NVIDIA Container Toolkit on the host; in "
        "Kubernetes a nvidia.com/gpu resource limit; NVIDIA_VISIBLE_DEVICES must not be void, none or empty), or on "
        "a bare host check `nvidia-smi`. Without a GPU, `conformance -m cpu` (from a checkout `python -m pytest "
        "conformance -m cpu`) runs the CPU checks; `--require-gpu` records each GPU check as failed instead."
    )


def no_gpu_facts() -> dict[str, str]:
    """What was looked for, and what was found: torch's device count, the container runtime's variable, the
    driver library and the device nodes (the subprocess probe of gpu_access), and its diagnosis."""
    import os

    import torch

    from conformance.support.probes.gpu_access import diagnose, run_probe
    from pytorch_cuda_contract.driver import requirement_for_cuda

    probe = run_probe()
    runtime = torch.version.cuda
    access = diagnose(probe, runtime, requirement_for_cuda(runtime) if runtime else None,
                      os.environ.get("CUDA_VISIBLE_DEVICES"))  # fmt: skip
    library = "loads" if probe.get("libcuda") else f"cannot be loaded ({probe.get('libcuda_error') or 'not probed'})"
    nodes = probe.get("device_nodes")
    return {
        "torch.cuda.device_count()": f"0 (torch {torch.__version__}, CUDA {runtime or 'none: a CPU-only build'})",
        "NVIDIA_VISIBLE_DEVICES": repr(os.environ["NVIDIA_VISIBLE_DEVICES"])
        if "NVIDIA_VISIBLE_DEVICES" in os.environ
        else "unset",
        "CUDA_VISIBLE_DEVICES": repr(os.environ.get("CUDA_VISIBLE_DEVICES", "unset")),
        "the driver library libcuda.so.1": library,
        "/dev/nvidia*": ", ".join(map(str, nodes)) if isinstance(nodes, list) and nodes else "none",
        "diagnosis": f"[{access.case}] {access.message}",
    }


def refuse_without_gpu(config: pytest.Config, items: list[pytest.Item]) -> str | None:
    """The paragraph to stop with when the selected checks (``items``: after -m, -k, paths and node ids) hold a GPU
    check and no GPU is visible; None otherwise (--require-gpu[s]: each GPU check then fails by name; no GPU check
    selected; --collect-only, which judges nothing; a GPU there; or torch that cannot even be imported: the suite
    then reports that failure by name)."""
    if required_gpus(config) or config.option.collectonly:
        return None
    gpu_checks = [i for i in items if i.get_closest_marker("gpu") or i.get_closest_marker("multigpu")]
    if not gpu_checks:
        return None
    try:
        if visible_gpu_count() > 0:
            return None
        facts = no_gpu_facts()
    except Exception:  # torch cannot be imported: the checks fail at collection, named
        return None
    return no_gpu_paragraph(len(gpu_checks), facts)
