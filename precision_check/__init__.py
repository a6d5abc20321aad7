"""precision-check: should MY model train in fp32, fp16 or bf16 on this GPU?

Standard library and torch only; it never imports the builder (pytorch_cuda) or pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from precision_check.workload import Workload

__all__ = ["Workload"]


def __getattr__(name: str) -> object:
    """``Workload`` loads torch on first use, so that the report's modules (report, display, upgrade: standard
    library only) read and rewrite reports where torch is not installed."""
    if name == "Workload":
        from precision_check.workload import Workload

        return Workload
    raise AttributeError(f"module 'precision_check' has no attribute {name!r}")
