"""Subprocess probe: CPU Inductor compile of a pointwise module, vector ISA and OpenMP.

Started in the background when the session begins (a cold C++ compile takes up to a
minute, which then overlaps the GPU checks); prints one JSON object.  Run as a script.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    import torch

    from conformance.support.workloads.compile_check import PointwiseNet, compile_and_compare, has_cpp_kernel
    from conformance.support.workloads.numerics import seeded_randn

    result: dict[str, object] = {"openmp": bool(torch.backends.openmp.is_available())}
    try:
        from torch._inductor.cpu_vec_isa import pick_vec_isa

        isa = pick_vec_isa()
        result["vec_isa"] = str(isa) if isa else None
    except Exception as exc:
        result["vec_isa_error"] = f"{type(exc).__name__}: {exc}"
    try:
        outcome = compile_and_compare(PointwiseNet, seeded_randn((16, 32), seed=32), None, backward=False)
    except Exception as exc:
        lines = traceback.format_exception_only(type(exc), exc)
        result["error"] = "".join(lines).strip()[-3000:]
    else:
        result.update(
            graph_count=outcome.graph_count,
            graph_break_count=outcome.graph_break_count,
            break_reasons=list(outcome.break_reasons),
            code_modules=len(outcome.generated_code),
            has_cpp_kernel=has_cpp_kernel("\n".join(outcome.generated_code)),
            errors=outcome.errors,
            explain_s=outcome.explain_s,
            compile_and_run_s=outcome.compile_and_run_s,
        )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
