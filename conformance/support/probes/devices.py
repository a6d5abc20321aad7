"""GPU inventory through torch, and the arch-list check."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Final

import torch

from pytorch_cuda_contract.gpu import ComputeCapability, GpuDevice


def gpu_count() -> int:
    """Visible CUDA devices (0 on CPU-only torch or without a driver)."""
    if torch.version.cuda is None or not torch.cuda.is_available():
        return 0
    return int(torch.cuda.device_count())


def list_gpus() -> list[GpuDevice]:
    gpus = []
    for index in range(gpu_count()):
        props = torch.cuda.get_device_properties(index)
        gpus.append(
            GpuDevice(
                index=index,
                name=str(props.name),
                capability=ComputeCapability(int(props.major), int(props.minor)),
                memory_bytes=int(props.total_memory),
                multiprocessors=int(props.multi_processor_count),
                uuid=str(props.uuid) if getattr(props, "uuid", None) is not None else None,
            )
        )
    return gpus


def no_gpu_reason() -> str:
    """Why no GPU is visible, told from the driver stack up (see gpu_access)."""
    if torch.version.cuda is None:
        return f"no GPU visible: torch {torch.__version__} is a CPU-only build"
    from conformance.support.probes.gpu_access import diagnose, run_probe
    from pytorch_cuda_contract.driver import requirement_for_cuda

    access = diagnose(
        run_probe(),
        torch.version.cuda,
        requirement_for_cuda(torch.version.cuda),
        os.environ.get("CUDA_VISIBLE_DEVICES"),
    )
    return (
        f"no GPU visible: torch.cuda.is_available() is False (torch {torch.__version__}, CUDA "
        f"{torch.version.cuda}): [{access.case}] {access.message}"
    )


_ARCH = re.compile(r"^(sm|compute)_(\d+)([a-z]?)$")


@dataclass(frozen=True)
class ArchVerdict:
    ok: bool
    exact: bool
    message: str


def _split_arch(number: str) -> tuple[int, int]:
    return int(number[:-1]), int(number[-1])


def judge_arch(capability: tuple[int, int], arch_list: list[str]) -> ArchVerdict:
    """Can kernels in ``arch_list`` run on a device of ``capability``?

    Exact ``sm_XY``: ok.  A cubin ``sm_XZ`` with the same major and Z < Y runs
    (binary compatibility): ok with a note.  Only PTX ``compute_AB`` with AB <= XY:
    ok with a note (JIT on first launch).  Otherwise: not ok.
    """
    major, minor = capability
    wanted = f"sm_{major}{minor}"
    cubins: list[tuple[int, int]] = []
    ptx: list[tuple[int, int]] = []
    for entry in arch_list:
        match = _ARCH.match(entry)
        if match is None:
            continue
        kind, number, suffix = match.groups()
        arch = _split_arch(number)
        if kind == "sm":
            if arch == capability:
                return ArchVerdict(True, True, f"{wanted} is in the arch list ({entry})")
            if not suffix and arch[0] == major and arch[1] < minor:
                cubins.append(arch)
        elif not suffix and arch <= capability:
            ptx.append(arch)
    if cubins:
        best = max(cubins)
        return ArchVerdict(
            True, False, f"{wanted} not in the arch list; runs sm_{best[0]}{best[1]} cubins (binary compatible)"
        )
    if ptx:
        best = max(ptx)
        return ArchVerdict(
            True,
            False,
            f"{wanted} not in the arch list; runs via PTX JIT from compute_{best[0]}{best[1]} (slow first launch)",
        )
    return ArchVerdict(
        False,
        False,
        f"torch {torch.__version__} has no kernels for {wanted} (arch list: {', '.join(arch_list)}); "
        f"use a torch build/image that includes {wanted}",
    )


PTX_JIT_VARIABLE: Final = "CUDA_FORCE_PTX_JIT"  # the driver ignores the compiled kernels (SASS) and JITs the PTX


def kernel_launch_problem(index: int) -> str | None:
    """None when an elementwise kernel runs on GPU ``index``; else why not. The arch list is what torch was built
    for; the driver may still find no kernel image this GPU can run (the SASS ignored under CUDA_FORCE_PTX_JIT=1
    and no PTX old enough to JIT, a wheel built for other architectures)."""
    try:
        value = torch.ones(4, device=torch.device("cuda", index)).add_(1).sum().item()
    except RuntimeError as exc:  # torch.AcceleratorError is a RuntimeError
        reason = str(exc).splitlines()[0]
        if os.environ.get(PTX_JIT_VARIABLE):
            reason += f" ({PTX_JIT_VARIABLE}={os.environ[PTX_JIT_VARIABLE]} is set: the compiled kernels are ignored)"
        return reason
    return None if value == 8.0 else f"an elementwise kernel returned {value}, not 8.0"
