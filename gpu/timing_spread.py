"""Where the run-to-run spread of the timed numbers comes from (issue 49): the suite's way of timing conv and GEMM,
side by side with the alternatives, each in several fresh processes, on one GPU host.

    $PY gpu/timing_spread.py [--processes 6] [--out FILE.json]

Each child process (a fresh CUDA context, as each suite run is) times every variant below once, in an order rotated
by the child's number, and names the kernel each variant ran (torch.profiler, one call). The parent prints, per
variant and metric, the children's medians and their spread ((max - min) / median), which is what the nightly
history sees as run-to-run noise:

- ``suite``: what the suite does now (timing harness 3: one call a repetition after an L2 flush, behind the launch
  hold, conformance/support/workloads/launch_hold.py); ``unheld``: the same without the hold (harness 2);
  ``suite-again``: ``suite`` again, last in the child (drift inside one process);
- conv (fp16, bf16; tf32 suite and unheld only) ``rotate4``: 4 copies of the input at their own addresses, one a
  repetition in turn (a placement a process gets is averaged over);
- GEMM (fp16, bf16; tf32 suite and unheld only) ``rotate4``: 4 pairs of inputs in turn;
- SDPA (fp16, bf16): ``suite`` and ``unheld``.

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

CONV_VARIANTS = ("unheld", "suite", "rotate4", "suite-again")
GEMM_VARIANTS = ("unheld", "suite", "rotate4")
SDPA_VARIANTS = ("unheld", "suite")
TF32_VARIANTS = ("unheld", "suite")  # conv and GEMM in TF32: the harness's effect only
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

    def timed(one: Callable[[], object], run: Callable[[], object], work: float, held: bool) -> dict[str, object]:
        """``run`` timed under the suite's plan (``work`` FLOPs a repetition), with the kernels of ``one`` call."""
        names = kernel_names(one)
        with ClockSampler() as clocks:
            timings = time_cuda(run, device, plan, held=held)
        tflops, fields = timings.rate(work)
        return {
            "tflops": tflops,
            "rel_iqr": fields.get("rel_iqr"),
            "reps": len(timings.times_ms),
            "stopped": timings.stopped,
            "kernels": names,
            "sm_mhz": _clock_summary(clocks.samples),
            "note": timings.device_note,
        }

    def conv_case(variant: str, dtype: torch.dtype) -> dict[str, object]:
        n, c, h, w = 32, 256, 56, 56  # conformance/test_article.py's CONV_SHAPE
        memory = torch.channels_last
        copies = ROTATED if variant == "rotate4" else 1
        inputs = [seeded_randn((n, c, h, w), 51, device, dtype).contiguous(memory_format=memory) for _ in range(copies)]
        weight = (seeded_randn((c, c, 3, 3), 52, device, dtype) / 48).contiguous(memory_format=memory)
        turn = itertools.cycle(inputs)

        def run() -> None:
            torch.nn.functional.conv2d(next(turn), weight, padding=1)

        one = functools.partial(torch.nn.functional.conv2d, inputs[0], weight, padding=1)
        return timed(one, run, 2.0 * n * c * h * w * c * 9, held=variant != "unheld")

    def gemm_case(variant: str, dtype: torch.dtype) -> dict[str, object]:
        n = 8192
        copies = ROTATED if variant == "rotate4" else 1
        pairs = [
            (seeded_randn((n, n), 11, device, dtype), seeded_randn((n, n), 12, device, dtype)) for _ in range(copies)
        ]
        result = torch.empty(n, n, device=device, dtype=dtype)
        turn = itertools.cycle(pairs)

        def rotated() -> None:
            left, right = next(turn)
            torch.mm(left, right, out=result)

        one = functools.partial(torch.mm, pairs[0][0], pairs[0][1], out=result)
        return timed(one, rotated, 2.0 * n * n * n, held=variant != "unheld")

    def sdpa_case(variant: str, dtype: torch.dtype) -> dict[str, object]:
        batch, heads, sequence, head_dim = shape = (8, 16, 1024, 64)  # conformance/test_sdpa.py's THROUGHPUT_SHAPE
        q, k, v = (seeded_randn(shape, seed, device, dtype) for seed in (25, 26, 27))
        one = functools.partial(torch.nn.functional.scaled_dot_product_attention, q, k, v)
        return timed(one, one, 4.0 * batch * heads * sequence * sequence * head_dim, held=variant != "unheld")

    torch.set_float32_matmul_precision("high")  # float32 GEMMs in TF32; cuDNN's convs are TF32 by default
    halves = (("fp16", torch.float16), ("bf16", torch.bfloat16))
    cases: list[tuple[str, Callable[[], dict[str, object]]]] = []
    for kind, case, variants in (("conv", conv_case, CONV_VARIANTS), ("gemm", gemm_case, GEMM_VARIANTS)):
        for variant in variants:
            for name, dtype in halves:
                cases.append((f"{kind}.{name}.{variant}", functools.partial(case, variant, dtype)))
        for variant in TF32_VARIANTS:
            cases.append((f"{kind}.tf32.{variant}", functools.partial(case, variant, torch.float32)))
    for variant in SDPA_VARIANTS:
        for name, dtype in halves:
            cases.append((f"sdpa.{name}.{variant}", functools.partial(sdpa_case, variant, dtype)))
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
