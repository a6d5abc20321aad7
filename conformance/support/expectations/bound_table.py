"""docs/conformance-bounds.md's bounds table, from the constants now in the code: bounds.py, ratios.py and the test
modules' constants (read with ``ast``, never imported: they import torch). Every named bound a gate uses shows up
here, so that changing any of them makes the page stale (tests/repo/test_gate_lint.py changes each one)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from conformance.support import SUITE_SOURCE
from conformance.support.expectations import bounds, ratios
from conformance.support.expectations.measured_floors import floor_rows
from pytorch_cuda_contract import shared_memory

Row = tuple[str, str, str, str]  # number, measured on the H200 (H100 where said), bound, a fault that crosses it
GIB: Final = 2**30


def constants(module: str, suite: Path = SUITE_SOURCE) -> dict[str, Any]:
    """The literal top-level constants of ``conformance/<module>.py`` (read, not imported)."""
    tree = ast.parse((suite / f"{module}.py").read_text(encoding="utf-8"))
    found: dict[str, Any] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id.isupper() and value is not None:
            try:
                found[target.id] = ast.literal_eval(value)
            except ValueError:
                continue
    return found


def _pct(value: float) -> str:
    return f"{100 * value:g} %"


def _num(value: float) -> str:
    """1e-05 -> 1e-5, 0.0065 -> 6.5e-3, 0.5 -> 0.5."""
    if value >= 0.01:
        return f"{value:g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa.removesuffix('.0')}e{int(exponent)}"


def _pair(table: Mapping[str, float], keys: Sequence[str] = ("fp16", "bf16")) -> str:
    return " / ".join(_num(table[k]) for k in keys)


def _throughput(article: Mapping[str, Any]) -> list[Row]:
    floor, ceiling, busbw = bounds.THROUGHPUT_FLOOR, bounds.DATASHEET_CEILING, bounds.BUSBW_FLOOR_GBPS
    return [
        ("`gemm.{fp16,bf16}.tflops`", "751 / 775", f"{_pct(floor['fp16'])} / {_pct(floor['bf16'])} to "
         f"{_pct(ceiling)} of the datasheet peak (989.4)", "below: no tensor cores, throttled, a busy GPU. Above: "
         "timing without a sync, or a kernel that skips work"),
        ("`gemm.tf32.tflops`", "407", f"{_pct(floor['tf32'])}..{_pct(ceiling)} of 494.7", "TF32 off, broken timing"),
        ("`gemm.fp32.tflops`", "51.2", f"{_pct(floor['fp32'])}..{_pct(ceiling)} of 67",
         "`NVIDIA_TF32_OVERRIDE=1` gives 404 (fp32 runs as TF32)"),
        ("`gemm.{tf32,fp16,bf16}.x_fp32`", "7.9 / 14.7 / 15.1 (every run of both cards: 0.93-1.10 × the ratio)",
         f"≥ {ratios.GATE_FRACTION:g} and ≤ {ratios.RATIO_CEILING:g} × the architecture's ratio",
         "`CUBLAS_WORKSPACE_CONFIG=:0:0` gives tf32 4.1-4.2 (< 4.44); a ratio halved crosses on both cards; forced "
         "TF32 gives 0.97 / 1.77; a crippled fp32 path gives far above the ratio"),
        ("`fp32_highest_tflops`", "51.2", f"≤ {ratios.FP32_PEAK_MARGIN:g} × the fp32 datasheet peak, and where the "
         f"TF32 ratio is ≥ {ratios.SEVERAL_TIMES:g}, ≤ measured TF32 / ({ratios.TF32_REFERENCE_FRACTION:g} × the "
         "TF32 ratio)", "forced TF32 (404)"),
        ("`conv.fp32.tflops` (cuDNN TF32 off: a program that asks for IEEE)", "43.5",
         f"≥ {_pct(article['CONV_FLOOR'])} of the fp32 peak; ≤ {article['WINOGRAD_ALLOWANCE']:g} (Winograd) × the "
         "fp32 bound above", "TF32 let into cuDNN: 405.5"),
        ("`conv.tf32.tflops` (fp32 conv at the image's default policy: TF32)", "389 (H100) / 384 (H200)",
         f"{_pct(article['CONV_FLOOR'])}..{_pct(ceiling)} of the TF32 peak (494.7)",
         "cuDNN off (torch's native IEEE kernels): 27.3 / 28.2"),
        ("`conv.{fp16,bf16}.tflops`", "594 / 567", f"{_pct(article['CONV_FLOOR'])}..{_pct(ceiling)} of the "
         "datasheet peak", "no tensor-core conv kernel; cuDNN switched off"),
        ("`amp.speedup.{fp16,bf16}`", "6.46 / 6.87", f"≥ max({bounds.AMP_MINIMUM:g}, {bounds.AMP_SHARE_OF_GEMM:g} × "
         f"the same run's GEMM ratio), ≤ {bounds.AMP_CEILING_OF_GEMM:g} × that ratio; with the caching allocator off "
         f"≥ {bounds.UNCACHED_AMP_MINIMUM:g}", "autocast does not reach the tensor cores (about 1×); above: the fp32 "
         "step was slowed"),
        ("`amp.mem_saving_pct.{fp16,bf16}`", "31.46 / 31.46 (every run of both cards)",
         f"≥ {bounds.AMP_MEMORY_FLOOR_PCT:g} %, ≤ {bounds.AMP_MEMORY_CEILING_PCT:g} %",
         "autocast not applied: 0.02 %; a saving halved (15.7 %) crosses it"),
        ("`sdpa.{fp16,bf16}.tflops` with the caching allocator off", "not yet measured under the setting",
         f"≥ {bounds.UNCACHED_SDPA_FLOOR_OF_PEAK:g} × the datasheet peak", "the math backend: 12.4 (H100)"),
        ("`nccl.busbw_gbps` (2+ GPUs)", "not measured on one GPU", f"≥ {busbw['nvlink']:g} GB/s on NVLink, "
         f"{busbw['pcie']:g} on PCIe, {busbw['unknown']:g} when NVML cannot tell the link; ≤ "
         f"{bounds.BUSBW_CEILING_GBPS:g}", "NCCL on TCP sockets (`NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1`)"),
        ("`dev_shm_size`", "131072 MiB (H100 host); 1024 with `--shm-size=1g`",
         f"≥ {shared_memory.MIN_SHM_BYTES / GIB:g} GiB",
         "Docker's default 64 MiB; a 16 MiB /dev/shm (DataLoader workers die)"),
    ]  # fmt: skip


def _accuracy(read: Callable[[str], dict[str, Any]]) -> list[Row]:
    precision, amp, sdpa, compiled = read("test_precision"), read("test_amp"), read("test_sdpa"), read("test_compile")
    speed, distributed, smoke, device = (
        read("test_compile_speed"),
        read("test_distributed"),
        read("test_smoke"),
        (read("test_device")),
    )
    low, high = bounds.TF32_ERROR_RANGE
    timed = speed["ERROR_BOUND"]
    return [
        ("`gemm.fp32.error` (4096³)", "1.15e-6; TF32 2.9e-4", f"< {_num(precision['FP32_IEEE_BOUND'])}",
         "`NVIDIA_TF32_OVERRIDE=1`, TF32 forced into cuBLAS"),
        ("`gemm.tf32.error` (4096³, precision 'high')", "2.94e-4", f"{_num(precision['TF32_BAND'][0])}.."
         f"{_num(precision['TF32_BAND'][1])}", "TF32 not used when asked"),
        ("`sdpa.fp32.error`, `conv.fp32.error`", "5.7e-7, 4.2e-7 (H100); TF32 4.2e-4, 2.9e-4",
         f"< {_num(bounds.FP32_IEEE_ERROR_BOUND)}", "TF32 forced into attention or into cuDNN (`sdpa_fp32_tf32`, "
         "`cudnn_tf32_forced`)"),
        ("`conv.tf32.error` (fp32 conv at the image's default policy)", "2.93e-4 (H100 and H200)",
         f"{_num(low)}..{_num(high)}", "cuDNN off: IEEE 4.2e-7 (TF32 allowed and not used)"),
        ("`gemm.{fp16,bf16}.error` (4096³)", "2.08e-4 / 1.66e-3", f"< {_pair(precision['GEMM_ERROR_BOUND'])}",
         "kernels that lose precision (inputs rounded to fp8)"),
        ("`conv.{fp16,bf16}.error` (fwd, dgrad, wgrad)", "2.07e-4 / 1.66e-3",
         f"< {_pair(precision['CONV_ERROR_BOUND'])}", "the same"),
        ("SDPA worst forward / grad_q, fp16 / bf16", "3.7e-4 / 2.9e-3", f"< {_pair(sdpa['SDPA_ERROR_BOUND'])}",
         "the same"),
        ("compile vs eager, fp32 / bf16", "2.0e-7 / 1.9e-3",
         f"< {_pair(compiled['GPU_COMPILE_BOUND'], ('fp32', 'bf16'))}; ≥ "
         f"{compiled['FORWARD_AND_BACKWARD_GRAPHS']} graphs (forward and backward)", "a wrong generated kernel; "
         "`TORCHDYNAMO_DISABLE=1`"),
        ("CPU Inductor vs eager, fp32", "8.8e-8 (H100)", f"< {_num(compiled['CPU_COMPILE_BOUND'])}",
         "a wrong generated kernel"),
        ("TorchScript fused fp16 (GPU) / optimised fp32 (CPU) vs eager", "3.1e-4 / 0 (H100)",
         f"< {_num(compiled['TORCHSCRIPT_FP16_BOUND'])} / {_num(compiled['TORCHSCRIPT_FP32_BOUND'])}",
         "a wrong fused kernel"),
        ("timed compile cases vs eager (inference / training / max-autotune CNN)", "1.0e-3 / 1.5e-6 / 7.7e-5 (H100)",
         f"< {_pair(timed, ('inference', 'training', 'max_autotune_cnn'))}", "a wrong generated kernel"),
        ("DDP hook update error, fp16 / bf16", "6.5e-5 / 4.8e-4", f"< {_pair(distributed['HOOK_UPDATE_BOUND'])}",
         "a compression hook that rounds to fp8"),
        ("fp16 weight gradient after loss scaling by 65536, unscaled, vs exact", "2.8e-4 (H100 and H200)",
         f"< {_num(bounds.SCALED_GRADIENT_TOLERANCE)} relative", "a bf16 gradient path: 1.2e-3; autocast off: no "
         "underflow without scaling"),
        ("training final loss vs fp32, fp16 / bf16", "1.74 % / 7.07 % (H100 alike)",
         f"< {_pct(amp['TRAINING_RELATIVE_TOLERANCE']['fp16'])} / {_pct(amp['TRAINING_RELATIVE_TOLERANCE']['bf16'])}; "
         f"final loss < {amp['TRAINING_MIN_REDUCTION']:g} × the first", "half-precision kernels that lose precision "
         "(87 % off); a run that does not learn"),
        ("float64 GEMM on every GPU vs the CPU", "about 1e-16", f"< {_num(device['FP64_GEMM_BOUND'])}",
         "the GEMM computed in float32"),
        ("cuSOLVER float64 SVD reconstruction", "about 1e-15", f"< {_num(smoke['SVD_BOUND'])}",
         "the SVD computed in float32"),
        ("cuFFT rfft vs pocketfft, float64 / float32", "5.4e-16 / 1.8e-7 (H100)",
         f"< {_pair(smoke['FFT_BOUND'], ('float64', 'float32'))}", "a low-precision FFT"),
        ("cuRAND statistics (mean, variance, χ² of 64 bins, lag-1, tails)", "inside",
         f"± {smoke['SIGMAS']:g} standard errors", "a bent or seed-ignoring generator"),
    ]  # fmt: skip


def bound_rows(read: Callable[[str], dict[str, Any]] = constants) -> dict[str, list[Row]]:
    """The bounds tables, from the constants now in the code."""
    measured = "Measured floors on the GPUs the nightly runs (tighter; measured_floors.py, docs/decay.md)"
    return {
        "Throughput and speed-ups": _throughput(read("test_article")),
        measured: floor_rows(),
        "Accuracy": _accuracy(read),
    }


def bounds_tables(rows: Mapping[str, Sequence[Row]]) -> str:
    out = []
    for title, table in rows.items():
        out += [f"### {title}", "", "| number | measured | bound | a fault that crosses it |"]
        out.append("| --- | --- | --- | --- |")
        out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in table]
        out.append("")
    return "\n".join(out)
