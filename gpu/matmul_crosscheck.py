"""Plain torch.matmul timing, independent of the conformance suite, to cross-check the report's GEMM numbers.

Same method as the suite's GEMM benchmark (conformance/support/workloads/gemm_bench.py): square m=n=k=8192 for every
dtype (with --compare: the size the results file records per dtype), random data, 3 warm-up calls,
CUDA-event time per call, the median; fp32 with matmul precision "highest" (IEEE), tf32 with "high".
Imports nothing from this repository.

    python3 gpu/matmul_crosscheck.py [--compare RESULTS.json] [--iterations 10] [--size 8192]

With --compare, reads the suite's results file (its "measurements" index, schema 2)
with the standard json module and prints the difference per dtype; exit 1 when one differs by more
than 5%. Writes matmul-crosscheck.json into $OUT when $OUT is set.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import torch

CASES = {
    "fp32": (torch.float32, "highest"),
    "tf32": (torch.float32, "high"),
    "fp16": (torch.float16, "highest"),
    "bf16": (torch.bfloat16, "highest"),
}
TOLERANCE = 0.05


def time_matmul(dtype: torch.dtype, precision: str, n: int, warmup: int, iterations: int) -> list[float]:
    torch.set_float32_matmul_precision(precision)
    generator = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn(n, n, device="cuda", dtype=dtype, generator=generator)
    b = torch.randn(n, n, device="cuda", dtype=dtype, generator=generator)
    out = torch.empty(n, n, device="cuda", dtype=dtype)
    for _ in range(warmup):
        torch.matmul(a, b, out=out)
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        start.record()
        torch.matmul(a, b, out=out)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    torch.set_float32_matmul_precision("highest")
    return times


def suite_sizes(path: Path) -> dict[str, int]:
    """m=n=k the suite used per dtype (its {dtype}_size metrics)."""
    found: dict[str, int] = {}
    for test in json.loads(path.read_text()).get("tests", {}).values():
        for dtype in CASES:
            metric = test.get("metrics", {}).get(f"{dtype}_size")
            if metric is not None:
                found[dtype] = int(metric["value"])
    return found


def suite_tflops(path: Path) -> dict[str, float]:
    document = json.loads(path.read_text())
    found: dict[str, float] = {}
    for dtype in CASES:
        metric = document.get("measurements", {}).get(f"gemm.{dtype}.tflops")
        if metric is not None:
            found[dtype] = float(metric["value"])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", type=Path, metavar="RESULTS.json")
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    sizes = suite_sizes(args.compare) if args.compare is not None else {}
    name = torch.cuda.get_device_name(0)
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {name}, median of {args.iterations}")
    measured: dict[str, dict[str, float]] = {}
    for dtype_name, (dtype, precision) in CASES.items():
        n = sizes.get(dtype_name, args.size)  # the suite's size when comparing
        times = time_matmul(dtype, precision, n, args.warmup, args.iterations)
        median_ms = statistics.median(times)
        tflops = 2.0 * n**3 / (median_ms * 1e-3) / 1e12
        measured[dtype_name] = {"size": n, "tflops": tflops, "median_ms": median_ms}
        measured[dtype_name].update(min_ms=min(times), max_ms=max(times))
        spread = f"(min {min(times):.3f}, max {max(times):.3f})"
        print(f"{dtype_name:5} m=n=k={n} {tflops:9.1f} TFLOP/s  median {median_ms:.3f} ms {spread}")
    status = 0
    if args.compare is not None:
        reference = suite_tflops(args.compare)
        for dtype_name, numbers in measured.items():
            if dtype_name not in reference:
                print(f"{dtype_name:5} not in {args.compare}")
                continue
            delta = numbers["tflops"] / reference[dtype_name] - 1.0
            verdict = "ok" if abs(delta) <= TOLERANCE else "DIFFERS"
            status |= verdict != "ok"
            numbers["suite_tflops"], numbers["delta"] = reference[dtype_name], delta
            versus = f"{numbers['tflops']:.1f} vs suite {reference[dtype_name]:.1f} TFLOP/s"
            print(f"{dtype_name:5} matmul {versus}: {delta:+.1%} {verdict}")
    if os.environ.get("OUT"):
        target = Path(os.environ["OUT"]) / "matmul-crosscheck.json"
        record = {"device": name, "torch": torch.__version__, "dtypes": measured}
        target.write_text(json.dumps(record, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main())
