"""What every verb of the command line shares: the parser class, the common options and the session."""

from __future__ import annotations

import argparse
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from pytorch_cuda.cli.root import find_root
from pytorch_cuda.console.progress import PROGRESS_MODES
from pytorch_cuda.errors import EXIT_USER_ERROR
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.target_selection import did_you_mean


class _Formatter(argparse.HelpFormatter):
    """Descriptions wrapped to the terminal; an epilog of examples kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return text
        return super()._fill_text(text, width, indent)


class _StoreOnce(argparse._StoreAction):
    """argparse's store, but a single-valued option given twice is an error, not a silent last-wins."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None
    ) -> None:
        given: set[str] = getattr(namespace, GIVEN, set())
        if self.dest in given:
            parser.error(
                f"{option} was given twice (the second: {values}); it takes one value, and build.py does not "
                f"pick one silently: pass {option} once"
            )
        setattr(namespace, GIVEN, given | {self.dest})
        super().__call__(parser, namespace, values, option)


GIVEN = "_options_given"  # the namespace's record of the single-valued options already given


class CommandParser(argparse.ArgumentParser):
    """argparse, with build.py's errors: one paragraph naming the cause and the fix, exit status 2. No
    abbreviations (--dry is not --dry-run), and a single-valued option given twice is refused."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str) -> NoReturn:
        text = (
            f"{self.prog}: error: {message.rstrip('.')}{self._guess(message)}. Fix: run `{self.prog} --help` to "
            "see what it accepts (exit status 2: bad input)."
        )
        self.exit(EXIT_USER_ERROR, textwrap.fill(text, width=100, break_on_hyphens=False) + "\n")

    def _guess(self, message: str) -> str:
        """' (did you mean ...?)' for a mistyped command, choice or option."""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            return did_you_mean(choice[1], re.findall(r"'([^']*)'", choice[2]))
        unknown = re.match(r"unrecognized arguments: (--[\w-]+)", message)
        if unknown:
            return did_you_mean(unknown[1].partition("=")[0], self._option_string_actions)
        return ""


def examples(*lines: str) -> str:
    """The epilog that ends a command's --help with examples (kept as written, not re-wrapped)."""
    return "examples:\n" + "\n".join(f"  python build.py {line}" for line in lines)


@dataclass(frozen=True)
class Session:
    """Where a verb runs: the repository it works on and where it prints."""

    root_flag: Path | None  # --root
    start: Path  # where the root is looked for when --root is not given
    out: Console
    err: Console

    def root(self) -> Path:
        return find_root(self.root_flag, self.start)

    def matrix(self, args: argparse.Namespace) -> Matrix:
        return load_matrix(args.matrix or self.root() / "matrix.yaml")


@dataclass(frozen=True)
class SharedOptions:
    """Option groups that several verbs take (argparse parents)."""

    common: argparse.ArgumentParser
    matrix: argparse.ArgumentParser
    build: argparse.ArgumentParser


def shared_options() -> SharedOptions:
    common = CommandParser(add_help=False)
    common.add_argument(
        "--json", action="store_true", help="print machine-readable JSON on stdout (progress on stderr)"
    )
    common.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="the repository (the folder with matrix.yaml and templates/); default: found from the working "
        "directory upward, or build.py's own folder",
    )
    matrix = CommandParser(add_help=False)
    matrix.add_argument("--matrix", type=Path, metavar="PATH", help="matrix file (default: ROOT/matrix.yaml)")
    return SharedOptions(common=common, matrix=matrix, build=_build_options())


def ca_bundle_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ca-bundle",
        type=Path,
        metavar="PATH",
        help="CA bundle for pip and uv (default: $PIP_CERT, $SSL_CERT_FILE or $REQUESTS_CA_BUNDLE); passed as a "
        "BuildKit secret, never stored in the image",
    )


def _build_options() -> argparse.ArgumentParser:
    p = CommandParser(add_help=False)
    p.add_argument(
        "--target",
        action="append",
        required=True,
        metavar="NAME",
        help="target to build: a name or alias from `list` (e.g. cu12), or a group (all); repeat it to build "
        "several, one after another",
    )
    p.add_argument("--flavour", metavar="NAME", help="image flavour (default: the matrix's default, runtime)")
    p.add_argument("--dry-run", action="store_true", help="print the build plan and run nothing")
    ca_bundle_option(p)
    checks = p.add_mutually_exclusive_group()  # skipping the checks and rerunning them contradict each other
    checks.add_argument(
        "--skip-checks", action="store_true", help="tag without running the in-image checks (not advised)"
    )
    checks.add_argument(
        "--recheck",
        action="store_true",
        help="rerun the in-image checks even when this image ID already passed them with this suite",
    )
    p.add_argument("--no-cache", action="store_true", help="build every step again, ignoring the build cache")
    p.add_argument(
        "--progress",
        choices=PROGRESS_MODES,
        default="auto",
        help="build progress on stderr: auto (steps and notable lines), plain (the whole build log), tty (auto, "
        "coloured), quiet (none)",
    )
    p.add_argument("--log-dir", type=Path, metavar="DIR", help="where build logs go (default: ROOT/build-output)")
    return p
