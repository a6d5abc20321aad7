"""The suite's two tables that must not go stale, written from its code: the checks (conformance/README.md: every
``test_*`` of ``conformance/test_*.py``, its marker and its docstring's first paragraph) and the bounds
(docs/conformance-bounds.md: each bound as the constants of bounds.py and the test modules say it now).

Standard library only, and it never imports a test module (they import torch): the test modules are read with
``ast``. ``python -m conformance.support.expectations.suite_docs`` rewrites the tables between their
``<!-- suite:start -->`` and ``<!-- suite:end -->`` lines; ``--check`` exits 1 when a page differs
(tests/repo/test_suite_docs.py runs it). A bound changed in code (the speed floors of issue 37) needs one re-run.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from conformance.support import SUITE_SOURCE
from conformance.support.expectations import bounds, ratios
from conformance.support.expectations.measured_floors import floor_rows

ROOT: Final = SUITE_SOURCE.parent
BLOCK: Final = re.compile(r"(<!-- suite:start [^>]*-->\n).*?(<!-- suite:end -->)", re.DOTALL)
MARKER_NAMES: Final = ("cpu", "gpu", "multigpu")


@dataclass(frozen=True)
class Check:
    module: str
    name: str
    params: str  # "[fp16,bf16]", or "" without parameters
    markers: str  # "gpu", "gpu, informational"
    doc: str  # the docstring's first paragraph, on one line


def _mark_names(decorators: Sequence[ast.expr]) -> list[str]:
    names = []
    for node in decorators:
        target = node.func if isinstance(node, ast.Call) else node
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute):
            names.append(target.attr)  # pytest.mark.<name>
    return names


def _param_ids(decorators: Sequence[ast.expr]) -> str:
    ids: list[str] = []
    for node in decorators:
        if not (isinstance(node, ast.Call) and _mark_names([node]) == ["parametrize"] and len(node.args) > 1):
            continue
        values = node.args[1]
        if isinstance(values, ast.List | ast.Tuple):
            for item in values.elts:
                first = item.args[0] if isinstance(item, ast.Call) and item.args else item
                ids.append(str(first.value) if isinstance(first, ast.Constant) else "…")
        else:
            ids.append("…")
    return f"[{','.join(ids)}]" if ids else ""


def _module_markers(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
            return _mark_names(values)
    return []


def checks(suite: Path = SUITE_SOURCE) -> list[Check]:
    """Every check of the suite, in file and source order."""
    found = []
    for path in sorted(suite.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_marks = _module_markers(tree)
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
                continue
            marks = _mark_names(node.decorator_list) + module_marks
            shown = [m for m in MARKER_NAMES if m in marks] + (["informational"] if "informational" in marks else [])
            doc = (ast.get_docstring(node) or "").split("\n\n")[0]
            found.append(Check(path.stem, node.name, _param_ids(node.decorator_list), ", ".join(shown),
                               " ".join(doc.split())))  # fmt: skip
    return found


def check_table(found: Sequence[Check]) -> str:
    lines = ["| module | test | marker | what it checks, and when it fails |", "| --- | --- | --- | --- |"]
    previous = None
    for check in found:
        module = check.module if check.module != previous else ""
        previous = check.module
        doc = (check.doc or "(no docstring)").replace("|", "\\|")
        lines.append(f"| {module} | `{check.name}{check.params}` | {check.markers} | {doc} |")
    return "\n".join(lines) + "\n"


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


Row = tuple[str, str, str, str]  # number, measured on the H200 (H100 where said), bound, a fault that crosses it


def bound_rows(read: Callable[[str], dict[str, Any]] = constants) -> dict[str, list[Row]]:
    """The bounds tables, from the constants now in the code."""
    floor, ceiling = bounds.THROUGHPUT_FLOOR, bounds.DATASHEET_CEILING
    article, precision, amp = read("test_article"), read("test_precision"), read("test_amp")
    sdpa, compiled, distributed, smoke = (
        read("test_sdpa"),
        read("test_compile"),
        read("test_distributed"),
        read("test_smoke"),
    )
    busbw = bounds.BUSBW_FLOOR_GBPS
    throughput: list[Row] = [
        ("`gemm.{fp16,bf16}.tflops`", "751 / 775", f"{_pct(floor['fp16'])} / {_pct(floor['bf16'])} to "
         f"{_pct(ceiling)} of the datasheet peak (989.4)", "below: no tensor cores, throttled, a busy GPU. Above: "
         "timing without a sync, or a kernel that skips work"),
        ("`gemm.tf32.tflops`", "407", f"{_pct(floor['tf32'])}..{_pct(ceiling)} of 494.7", "TF32 off, broken timing"),
        ("`gemm.fp32.tflops`", "51.2", f"{_pct(floor['fp32'])}..{_pct(ceiling)} of 67",
         "`NVIDIA_TF32_OVERRIDE=1` gives 404 (fp32 runs as TF32)"),
        ("`gemm.{tf32,fp16,bf16}.x_fp32`", "7.9 / 14.7 / 15.1",
         f"≥ {ratios.GATE_FRACTION:g} and ≤ {ratios.RATIO_CEILING:g} × the architecture's ratio",
         "forced TF32 gives 0.97 / 1.77; a crippled fp32 path gives far above the ratio"),
        ("`fp32_highest_tflops`", "51.2", f"≤ {ratios.FP32_PEAK_MARGIN:g} × the fp32 datasheet peak, and ≤ measured "
         f"TF32 / ({ratios.GATE_FRACTION:g} × the TF32 ratio)", "forced TF32 (404)"),
        ("`conv.fp32.tflops` (cuDNN TF32 off)", "43.5", f"≥ {_pct(article['CONV_FLOOR'])} of the fp32 peak; ≤ "
         f"{article['WINOGRAD_ALLOWANCE']:g} (Winograd) × the fp32 bound above", "TF32 let into cuDNN: 405.5"),
        ("`conv.{fp16,bf16}.tflops`", "594 / 567", f"{_pct(article['CONV_FLOOR'])}..{_pct(ceiling)} of the "
         "datasheet peak", "no tensor-core conv kernel; cuDNN switched off"),
        ("`amp.speedup.{fp16,bf16}`", "6.46 / 6.87", f"≥ max({bounds.AMP_MINIMUM:g}, {bounds.AMP_SHARE_OF_GEMM:g} × "
         f"the same run's GEMM ratio), ≤ {bounds.AMP_CEILING_OF_GEMM:g} × that ratio",
         "autocast does not reach the tensor cores (about 1×); above: the fp32 step was slowed"),
        ("`amp.mem_saving_pct.{fp16,bf16}`", "31.5 / 31.5", f"≥ {bounds.AMP_MEMORY_FLOOR_PCT:g} %",
         "autocast not applied: activations stay fp32 (about 0 %)"),
        ("`nccl.busbw_gbps` (2+ GPUs)", "not measured on one GPU", f"≥ {busbw['nvlink']:g} GB/s on NVLink, "
         f"{busbw['pcie']:g} on PCIe, {busbw['unknown']:g} when NVML cannot tell the link; ≤ "
         f"{bounds.BUSBW_CEILING_GBPS:g}", "NCCL on TCP sockets (`NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1`)"),
    ]  # fmt: skip
    accuracy: list[Row] = [
        ("`gemm.fp32.error` (4096³)", "1.15e-6; TF32 2.9e-4", f"< {_num(precision['FP32_IEEE_BOUND'])}",
         "`NVIDIA_TF32_OVERRIDE=1`, TF32 forced into cuBLAS"),
        ("`sdpa.fp32.error`, `conv.fp32.error`", "5.7e-7, 4.2e-7 (H100); TF32 4.2e-4, 2.9e-4",
         f"< {_num(bounds.FP32_IEEE_ERROR_BOUND)}", "TF32 forced into attention or into cuDNN (`sdpa_fp32_tf32`, "
         "`cudnn_tf32_forced`)"),
        ("`gemm.{fp16,bf16}.error` (4096³)", "2.08e-4 / 1.66e-3", f"< {_pair(precision['GEMM_ERROR_BOUND'])}",
         "kernels that lose precision (inputs rounded to fp8)"),
        ("`conv.{fp16,bf16}.error` (fwd, dgrad, wgrad)", "2.07e-4 / 1.66e-3",
         f"< {_pair(precision['CONV_ERROR_BOUND'])}", "the same"),
        ("SDPA worst forward / grad_q, fp16 / bf16", "3.7e-4 / 2.9e-3", f"< {_pair(sdpa['SDPA_ERROR_BOUND'])}",
         "the same"),
        ("compile vs eager, fp32 / bf16", "2.0e-7 / 1.9e-3",
         f"< {_pair(compiled['GPU_COMPILE_BOUND'], ('fp32', 'bf16'))}", "a wrong generated kernel"),
        ("DDP hook update error, fp16 / bf16", "6.5e-5 / 4.8e-4", f"< {_pair(distributed['HOOK_UPDATE_BOUND'])}",
         "a compression hook that rounds to fp8"),
        ("fp16 weight gradient after loss scaling by 65536, unscaled, vs exact", "2.8e-4 (H100 and H200)",
         f"< {_num(bounds.SCALED_GRADIENT_TOLERANCE)} relative", "a bf16 gradient path: 1.2e-3; autocast off: no "
         "underflow without scaling"),
        ("training final loss vs fp32, fp16 / bf16", "1.74 % / 7.07 % (H100 alike)",
         f"< {_pct(amp['TRAINING_RELATIVE_TOLERANCE']['fp16'])} / {_pct(amp['TRAINING_RELATIVE_TOLERANCE']['bf16'])}",
         "half-precision kernels that lose precision (87 % off)"),
        ("cuSOLVER float64 SVD reconstruction", "about 1e-15", f"< {_num(smoke['SVD_BOUND'])}",
         "the SVD computed in float32"),
        ("cuRAND statistics (mean, variance, χ² of 64 bins, lag-1, tails)", "inside",
         f"± {smoke['SIGMAS']:g} standard errors", "a bent or seed-ignoring generator"),
    ]  # fmt: skip
    measured = "Measured floors on the GPUs the nightly runs (tighter; measured_floors.py, docs/decay.md)"
    return {"Throughput and speed-ups": throughput, measured: floor_rows(), "Accuracy": accuracy}


def bounds_tables(rows: Mapping[str, Sequence[Row]]) -> str:
    out = []
    for title, table in rows.items():
        out += [f"### {title}", "", "| number | measured | bound | a fault that crosses it |"]
        out.append("| --- | --- | --- | --- |")
        out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in table]
        out.append("")
    return "\n".join(out)


PAGES: Final[dict[str, Callable[[], str]]] = {
    "conformance/README.md": lambda: check_table(checks()),
    "docs/conformance-bounds.md": lambda: bounds_tables(bound_rows()),
}


def rendered(page: str, text: str, table: str) -> str:
    """``text`` with its generated block replaced by ``table``; ValueError without one block."""
    if len(BLOCK.findall(text)) != 1:
        raise ValueError(f"{page}: needs exactly one <!-- suite:start ... --> ... <!-- suite:end --> block")
    return BLOCK.sub(lambda m: m.group(1) + table + m.group(2), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.support.expectations.suite_docs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when a page differs from the code")
    args = parser.parse_args(argv)
    stale = []
    for page, table in PAGES.items():
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        wanted = rendered(page, text, table())
        if wanted != text:
            stale.append(page)
            if not args.check:
                path.write_text(wanted, encoding="utf-8")
    verb = "rewritten"
    if args.check:
        verb = "differ from the code; run `python -m conformance.support.expectations.suite_docs`"
    for page in stale:
        print(f"{page}: {verb}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
