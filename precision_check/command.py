"""`precision-check MODULE:FACTORY`: should my model train in fp32, fp16 or bf16 on this GPU?

Exit status: 0 with a verdict; 2 on bad input or a usage error, e.g. --steps below MIN_STEPS (one paragraph on
stderr: the cause and the fix).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from precision_check import workload as contract
from precision_check.agreement import END_WINDOW, MIN_STEPS
from precision_check.bad_input import EXIT_BAD_INPUT, EXIT_OK, PrecisionCheckError
from precision_check.check_report import VERDICT_KIND_MEANING, Report
from precision_check.device import CPU_DTYPES, DEFAULT_DTYPES, DTYPES, pick_device, plan_dtypes
from precision_check.display import to_json
from precision_check.loading import call_factory, load_factory
from precision_check.runner import Options, run_all
from precision_check.terminal_table import render
from precision_check.verdict import decide
from precision_check.workload import coerce_workload


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise PrecisionCheckError(f"bad arguments: {message}", f"see `{self.prog} --help`")


def _kinds_help() -> str:
    lines = [f"  {kind:<18} {meaning}" for kind, meaning in VERDICT_KIND_MEANING.items()]
    return "The verdict's kind (its `kind` in --json; docs/precision-check.md in the source says more):\n" + "\n".join(
        lines
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="precision-check",
        description="Train your model for a few steps in fp32, fp16 and bf16 from the same weights on the same "
        "batches, and say which dtype it should use on this GPU, with the numbers. Exit 0 with a verdict, "
        "2 on bad input or a usage error.",
        epilog=f"{contract.__doc__}\n{_kinds_help()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", metavar="MODULE:FACTORY", help="path/to/file.py:factory or package.module:factory")
    parser.add_argument(
        "--steps",
        type=int,
        default=50,
        help=f"training steps per dtype (default 50, at least {MIN_STEPS}): the end of training is judged on the "
        f"mean loss of the last fifth of the steps, at most {END_WINDOW}; run as many as it takes fp32 to reach "
        "the loss you train to, or a precision limit below it cannot show",
    )
    parser.add_argument(
        "--dtypes",
        help=f"comma-separated, from {','.join(DTYPES)} (default {','.join(DEFAULT_DTYPES)} on a GPU, "
        f"{','.join(CPU_DTYPES)} on the CPU; tf32 only when asked)",
    )
    parser.add_argument("--compile", action="store_true", help="also time each dtype under torch.compile")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the report as JSON here")
    parser.add_argument("--device", choices=("cuda", "cpu"), help="default: cuda when a GPU is visible, else cpu")
    parser.add_argument("--timed-steps", type=int, help="steps timed after warm-up (default 20 on a GPU, 5 on CPU)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def _progress(line: str) -> None:
    print(f"precision-check: {line}", file=sys.stderr, flush=True)


def run(argv: Sequence[str]) -> Report:
    args = _parser().parse_args(argv)
    if args.steps < MIN_STEPS:
        raise PrecisionCheckError(
            f"--steps {args.steps} is too few: the verdict judges the end of training on the last fifth of the "
            f"steps, and needs at least {MIN_STEPS} steps for an end distinct from the start",
            f"give --steps {MIN_STEPS} or more (default 50; more where fp32's loss is still falling)",
        )
    if args.timed_steps is not None and args.timed_steps < 1:
        raise PrecisionCheckError(f"--timed-steps {args.timed_steps} is too few", "give --timed-steps 1 or more")
    device, notes = pick_device(args.device)
    asked = None if args.dtypes is None else [d.strip() for d in args.dtypes.split(",") if d.strip()]
    dtypes, dtype_notes = plan_dtypes(asked, device)
    workload = coerce_workload(call_factory(load_factory(args.target), args.target, device.kind), args.target)
    timed = args.timed_steps or (20 if device.kind == "cuda" else 5)
    options = Options(args.steps, dtypes, args.compile, warmup=3 if device.kind == "cuda" else 1, timed_steps=timed)
    measurements = run_all(workload, options, device, notes + dtype_notes, progress=_progress)
    created = datetime.now(UTC).isoformat(timespec="seconds")
    report = Report(args.target, created, measurements, decide(measurements))
    if args.json is not None:
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(to_json(report), encoding="utf-8")
        except OSError as exc:
            raise PrecisionCheckError(
                f"cannot write {args.json}: {exc.strerror}", "give a writable --json path"
            ) from exc
    return report


def main(argv: Sequence[str] | None = None) -> int:
    try:
        report = run(sys.argv[1:] if argv is None else argv)
    except PrecisionCheckError as err:
        print(err.paragraph(), file=sys.stderr)
        return EXIT_BAD_INPUT
    print(render(report), end="")
    return EXIT_OK
