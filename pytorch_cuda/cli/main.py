"""The command line: parse the verb (`--target T` alone: build), find the repository, run it, report errors."""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from pytorch_cuda.cli.arguments import parse, parser, short_form
from pytorch_cuda.cli.options import Session
from pytorch_cuda.console.output import dumps
from pytorch_cuda.errors import UserError


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM (a killed CI job, `timeout`) cleans up like Ctrl-C


def main(argv: Sequence[str] | None = None, *, start: Path | None = None, prog: str = "build.py") -> int:
    """Run one command; `start` is where the repository is looked for (build.py passes its own folder)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _interrupt)
    # Even when started with SIGINT ignored (a background job of a script), `kill -INT` stops the build cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    cli = parser(prog, verb=argv[0] if argv and not argv[0].startswith("-") else None)
    args = parse(cli, short_form(cli, argv))
    session = Session(args.root, start or Path.cwd(), out=_console(stderr=False), err=_console(stderr=True))
    try:
        status: int = args.run(args, session)
        return status
    except UserError as error:
        if args.json:
            print(dumps({"error": type(error).__name__, "cause": error.cause, "fix": error.fix}))
        session.err.print(error.paragraph(), style="bold red", highlight=False, markup=False)
        return error.exit_status
    except KeyboardInterrupt:
        session.err.print("interrupted; no tag was moved", style="red")
        return 130


def console_script() -> int:
    """`pytorch-cuda-build`: build.py's verbs on the repository found from the working directory (or --root)."""
    return main(prog="pytorch-cuda-build")


def _console(*, stderr: bool) -> Console:
    probe = Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=True, width=None if probe.is_terminal else 160)
