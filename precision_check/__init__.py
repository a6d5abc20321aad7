"""precision-check: should MY model train in fp32, fp16 or bf16 on this GPU?

Standard library and torch only; it never imports the builder (pytorch_cuda) or pytest.
"""

from precision_check.contract import Workload

__all__ = ["Workload"]
