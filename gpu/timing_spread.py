"""Where the run-to-run spread of the timed numbers comes from (issue 49): the suite's way of timing conv and GEMM,
side by side with the alternatives, each in several fresh processes, on one GPU host.

    $PY gpu/timing_spread.py [--processes 6] [--out FILE.json]

Each child process (a fresh CUDA context, as each suite run is) times every variant below once, in an order rotated
by the child's number, and names the kernel each variant ran (torch.profiler, one call). The parent prints, per
variant and metric, the children's medians and their spread ((max - min) / median), which is what the nightly
history sees as run-to-run noise:

- conv ``suite``: what conformance/test_article.py does (one call per repetition after an L2 flush, cuDNN's
  heuristics choose the engine); ``suite-again``: the same, last in the child (drift inside one process);
- conv ``benchmark``: ``torch.backends.cudnn.benchmark = True`` (cuDNN times its engines and keeps the fastest);
- conv ``batch8``: 8 back-to-back calls per repetition (one flush), the rate over 8 calls;
- conv ``n128``: the same conv at batch 128 (4x the work per call);
- conv ``rotate4``: 4 copies of the input at their own addresses, one a repetition in turn (a placement a process
  gets is averaged over); ``benchmark-batch8`` and ``benchmark-rotate4-batch8``: those together;
- GEMM ``suite``: gemm_bench's timing (8192^3); ``warm2s``: after 2 s of back-to-back GEMMs (power steady state);
  ``rotate4``: 4 pairs of inputs in turn.

With pynvml, the SM clock is sampled every 2 ms during each variant's repetitions (its min/median in the output).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONV_VARIANTS = (
    "suite", "benchmark", "batch8", "n128", "rotate4", "benchmark-batch8", "benchmark-rotate4-batch8", "suite-again"
)  # fmt: skip
GEMM_VARIANTS = ("suite", "warm2s", "rotate4")
ROTATED = 4  # the rotate variants: this many copies of the inputs, at their own addresses, one a repetition


class ClockSampler:
    """The SM clock (MHz) every 2 ms while active, from NVML (an empty list without pynvml)."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:  # no NVML: no samples
            self._nvml = None

    def __enter__(self) -> ClockSampler:
        if self._nvml is not None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        assert self._nvml is not None
        while not self._stop.is_set():
            self.samples.append(int(self._nvml.nvmlDeviceGetClockInfo(self._handle, self._nvml.NVML_CLOCK_SM)))
            time.sleep(0.002)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def kernel_names(fn: Callable[[], object]) -> list[str]:
    """The CUDA kernels one call of ``fn`` ran (torch.profiler), longest first; [] where the profiler fails."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        events = [e for e in prof.key_averages() if getattr(e, "device_type", None) is not None]
        ranked = sorted(events, key=lambda e: getattr(e, "self_device_time_total", 0), reverse=True)
        return [e.key[:120] for e in ranked if getattr(e, "self_device_time_total", 0) > 0][:3]
    except Exception as exc:  # the kernel's name is extra, never the point
        return [f"profiler failed: {type(exc).__name__}: {exc}"[:200]]


def child(index: int) -> dict[str, object]:
    import torch

    from conformance.support.workloads.cuda_timing import time_cuda
    from conformance.support.workloads.numerics import seeded_randn
    from conformance.support.workloads.repetition import Plan

    device = torch.device("cuda", 0)
    plan = Plan(warmup=3, least=10, cap_s=1.0)
    out: dict[str, object] = {"child": index}

    def timed(one: Callable[[], object], run: Callable[[], object], work: float) -> dict[str, object]:
        """``run`` timed under the suite's plan (``work`` FLOPs a repetition), with the kernels of ``one`` call."""
        names = kernel_names(one)
        with ClockSampler() as clocks:
            timings = time_cuda(run, device, plan)
        tflops, fields = timings.rate(work)
        return {
            "tflops": tflops,
            "rel_iqr": fields.get("rel_iqr"),
            "reps": len(timings.times_ms),
            "stopped": timings.stopped,
            "kernels": names,
            "sm_mhz": _clock_summary(clocks.samples),
        }

    def conv_case(variant: str, dtype: torch.dtype) -> dict[str, object]:
        n = 128 if variant == "n128" else 32
        c, h, w = 256, 56, 56
        memory = torch.channels_last
        copies = ROTATED if "rotate" in variant else 1
        inputs = [seeded_randn((n, c, h, w), 51, device, dtype).contiguous(memory_format=memory) for _ in range(copies)]
        weight = (seeded_randn((c, c, 3, 3), 52, device, dtype) / 48).contiguous(memory_format=memory)
        torch.backends.cudnn.benchmark = variant.startswith("benchmark")
        calls = 8 if "batch8" in variant else 1
        turn = itertools.cycle(inputs)

        def run() -> None:
            x = next(turn)
            for _ in range(calls):
                torch.nn.functional.conv2d(x, weight, padding=1)

        one = functools.partial(torch.nn.functional.conv2d, inputs[0], weight, padding=1)
        found = timed(one, run, calls * 2.0 * n * c * h * w * c * 9)
        torch.backends.cudnn.benchmark = False
        return found

    def gemm_case(variant: str, dtype: torch.dtype) -> dict[str, object]:
        n = 8192
        copies = ROTATED if variant == "rotate4" else 1
        pairs = [
            (seeded_randn((n, n), 11, device, dtype), seeded_randn((n, n), 12, device, dtype)) for _ in range(copies)
        ]
        a, b = pairs[0]
        result = torch.empty(n, n, device=device, dtype=dtype)
        turn = itertools.cycle(pairs)

        def rotated() -> None:
            left, right = next(turn)
            torch.mm(left, right, out=result)

        if variant == "warm2s":
            end = time.monotonic() + 2.0
            while time.monotonic() < end:
                for _ in range(20):
                    torch.mm(a, b, out=result)
                torch.cuda.synchronize()
        one = functools.partial(torch.mm, a, b, out=result)
        return timed(one, rotated, 2.0 * n * n * n)

    cases: list[tuple[str, Callable[[], dict[str, object]]]] = []
    for variant in CONV_VARIANTS:
        for name, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
            cases.append((f"conv.{name}.{variant}", functools.partial(conv_case, variant, dtype)))
    for variant in GEMM_VARIANTS:
        for name, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
            cases.append((f"gemm.{name}.{variant}", functools.partial(gemm_case, variant, dtype)))
    fixed_last = [case for case in cases if case[0].endswith("suite-again")]
    rotating = [case for case in cases if not case[0].endswith("suite-again")]
    shift = index % len(rotating)
    for key, measure in rotating[shift:] + rotating[:shift] + fixed_last:
        out[key] = measure()
    return out


def _clock_summary(samples: list[int]) -> dict[str, object] | None:
    if not samples:
        return None
    return {"min": min(samples), "median": statistics.median(samples), "max": max(samples), "n": len(samples)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child)))
        return 0
    children: list[dict[str, object]] = []
    for index in range(args.processes):
        started = time.monotonic()
        done = subprocess.run([sys.executable, __file__, "--child", str(index)], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"child {index}: exit {done.returncode}\n{done.stderr[-3000:]}", file=sys.stderr)
            return 1
        children.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"child {index}: {time.monotonic() - started:.1f} s", file=sys.stderr)
    keys = [key for key in children[0] if key != "child"]
    summary: dict[str, object] = {}
    print(f"{'variant':28} {'spread':>7} {'median':>8}  per process (TFLOP/s)  | SM MHz median (min)  | kernels")
    for key in keys:
        values = [float(c[key]["tflops"]) for c in children]  # type: ignore[index]
        centre = statistics.median(values)
        spread = (max(values) - min(values)) / centre
        clocks = [c[key]["sm_mhz"] for c in children]  # type: ignore[index]
        kernels = sorted({" / ".join(c[key]["kernels"])[:90] for c in children})  # type: ignore[index]
        summary[key] = {"values": values, "spread": spread, "median": centre, "clocks": clocks, "kernels": kernels}
        clock_text = " ".join(f"{k['median']:.0f}({k['min']})" if k else "-" for k in clocks)
        print(f"{key:28} {spread:7.1%} {centre:8.1f}  {' '.join(f'{v:6.1f}' for v in values)}  | {clock_text}")
        for name in kernels:
            print(f"{'':30}kernel: {name}")
    if args.out is not None:
        args.out.write_text(json.dumps({"children": children, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
