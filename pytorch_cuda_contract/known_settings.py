"""Settings a user may set that a stack we ship is measured to break: one table, read by the entry banner (a warning
before the run) and by the suite (the name of the cause in a failure). Standard library only.

Each entry is a measurement, not a guess: the card, the date and what failed are in ``evidence``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class KnownSettingProblem:
    variable: str
    value: str
    nccl_prefix: str  # the NCCL versions (a release prefix, "2.27.") where it was measured to break
    problem: str
    fix: str
    evidence: str

    def applies(self, environ: Mapping[str, str], nccl: str | None) -> bool:
        set_to = environ.get(self.variable, "").strip().upper()
        return set_to == self.value.upper() and nccl is not None and nccl.startswith(self.nccl_prefix)

    def cause(self) -> str:
        return f"{self.variable}={self.value} is set: {self.problem} ({self.evidence})"

    def hint(self) -> str:
        return f"{self.cause()}. Fix: {self.fix}."


KNOWN_SETTING_PROBLEMS: Final = (
    KnownSettingProblem(
        variable="CUDA_MODULE_LOADING",
        value="EAGER",
        nccl_prefix="2.27.",
        problem="NCCL's first collective fails with \"Cuda failure 'invalid resource handle'\" on this stack "
        "(NCCL 2.27), so DDP and every all-reduce fail",
        fix="unset CUDA_MODULE_LOADING (CUDA 12's default, LAZY, works)",
        evidence="measured on an H100 with torch 2.9.1+cu128 and NCCL 2.27.5, 2026-12-07; torch 2.11's NCCL 2.28 "
        "passed under the same setting: evidence/fault-coverage/h100-shipped",
    ),
)
KNOWN_SETTING_VARIABLES: Final = tuple(sorted({p.variable for p in KNOWN_SETTING_PROBLEMS}))


def setting_problems(environ: Mapping[str, str], nccl: str | None) -> tuple[KnownSettingProblem, ...]:
    """The known problems that ``environ`` (the variables a process runs with) meets on a stack with ``nccl``."""
    return tuple(p for p in KNOWN_SETTING_PROBLEMS if p.applies(environ, nccl))
