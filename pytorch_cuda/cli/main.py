"""The command line: list, render, check, lock, report, plan and build image variants."""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

from rich.console import Console

from pytorch_cuda.cli import ci, offline
from pytorch_cuda.cli.arguments import parser
from pytorch_cuda.cli.building import build
from pytorch_cuda.console.report import dumps
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix import load_matrix


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM (a killed CI job, `timeout`) cleans up like Ctrl-C


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["release"]:  # `build.py release promote|sign|verify|keygen` (docs/release.md)
        from pytorch_cuda.release.cli import main as release_main

        return release_main(argv[1:])
    signal.signal(signal.SIGTERM, _interrupt)
    # Even when started with SIGINT ignored (a background job of a script), `kill -INT` stops the build cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    cli = parser()
    args = cli.parse_args(argv)
    out = _console(stderr=False)
    err = _console(stderr=True)
    if not (args.target or args.list or args.render or args.check_render or args.lock or args.report or ci.asked(args)):
        cli.error("one of --target --list --render --check-render --lock --report --github-matrix is required")
    if args.lock and (args.list or args.render or args.check_render or args.dry_run):
        cli.error("--lock goes alone or with --target (and --flavour)")
    if args.dry_run and not args.target:
        cli.error("--dry-run goes with --target")
    if bool(args.push) != bool(args.registry) or (args.push and not args.target):
        cli.error("--push and --registry go together, with --target")
    if args.push_candidate and not args.push:
        cli.error("--push-candidate goes with --push and --registry")
    if bool(args.report) != bool(args.out):
        cli.error("--report and --out go together")
    try:
        if args.report:
            return offline.report(args.report, args.out, out, args.json)
        if ci.asked(args):
            return ci.run(args, out)
        matrix = load_matrix(args.matrix)
        if args.list:
            return offline.list_matrix(matrix, out, args.json)
        if args.render:
            return offline.render(matrix, out, args.json)
        if args.check_render:
            return offline.check_render(matrix, out, args.json)
        if args.lock:
            return offline.lock(matrix, args, out)
        return build(matrix, args, out, err)
    except UserError as error:
        if args.json:
            print(dumps({"error": type(error).__name__, "cause": error.cause, "fix": error.fix}))
        err.print(error.paragraph(), style="bold red", highlight=False, markup=False)
        return error.exit_status
    except KeyboardInterrupt:
        err.print("interrupted; no tag was moved", style="red")
        return 130


def _console(*, stderr: bool) -> Console:
    probe = Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=True, width=None if probe.is_terminal else 160)
