"""The command line's verbs, its help text and its exit statuses."""

from __future__ import annotations

import argparse
import importlib

from pytorch_cuda import __version__
from pytorch_cuda.cli.options import CommandParser, shared_options
from pytorch_cuda.matrix.target_selection import did_you_mean

# The modules of pytorch_cuda/cli/ that register the verbs, in --help's order, and the verbs each registers
# (tests/pytorch_cuda/cli/test_cli_verbs.py holds this table to what the modules register). A command names its
# verb first, so only that verb's module is imported: `release verify` does not load the audit, bot or build code.
VERB_MODULES: dict[str, tuple[str, ...]] = {
    "building": ("build", "push"),
    "bake_export": ("bake",),
    "listing": ("list",),
    "rendering": ("render",),
    "locking": ("lock",),
    "reporting": ("report",),
    "bumping": ("bump",),
    "bot_verbs": ("bot",),
    "dashboarding": ("dashboard",),
    "auditing": ("audit",),
    "ci_matrix": ("ci-matrix", "matrix"),
    "content_hashing": ("content-hash",),
    "tag_checking": ("check-tag",),
    "releasing": ("release",),
    "results_site": ("results", "site"),
    "completion": ("completion",),
}

EPILOG = """\
examples:
  python build.py --target cu12              build, check and tag pytorch-cuda:v2.9 (= build --target cu12)
  python build.py build --target cu12 --dry-run
                                             show the plan; run nothing
  python build.py build --target cu13 --flavour devel
                                             build the runtime, then devel FROM it
  python build.py build --target cu12 --target cu13
                                             both targets, one after the other (--target all: every target)
  python build.py push --target cu12 --registry 127.0.0.1:5000/ci
                                             build, check, tag, then push the full tag and the aliases
  python build.py list                       targets, aliases, pins and tags
  python build.py render                     render templates/ into images/
  python build.py render --check             fail (exit 1) when images/ or a lock is stale
  python build.py lock --target cu12         re-resolve images/cu128-runtime/requirements.lock; print what changed
  python build.py bump --target cu12 --dry-run
                                             the newest pins matrix.yaml's policy allows; held back ones
  python build.py audit --json --vex vex.cdx.json
                                             every lock against the advisory databases, Debian against -security
  python build.py report results.json --out report/
                                             precision report (report.html, .md, .json)
  python build.py ci-matrix                     the CI jobs (JSON): a build per variant, a GPU job per variant x runner
  python build.py content-hash IMAGE         sha256 of IMAGE's layers and run config and conformance/'s files
  python build.py check-tag v2.9.1           exit 2 unless the release tag names matrix.yaml's torch
  python build.py release verify IMAGE --public-key release.pub
                                             verify a release's signature, SBOM and provenance
  python build.py COMMAND --help             the options of one command (--json on each: JSON on stdout)

exit status: 0 success; 1 stale images/ or lock (render --check), or failed in-image checks, or advisories
found (audit); 3 a rebuild needed (bump); 4 partial (bump: a target's index did not answer; audit: pins
no advisory database answered for);
2 bad input or environment (matrix, target, engine, disk, index, download, missing lock, a build of
the same variant already running, a failed push); 130 interrupted (Ctrl-C: no tag moved; during a
push, the message names every remote tag and where it was left).
"""


def verb_module(verb: str) -> str | None:
    """The module of pytorch_cuda/cli/ that registers `verb`; None for a word that is no verb."""
    return next((module for module, verbs in VERB_MODULES.items() if verb in verbs), None)


def parser(prog: str = "build.py", verb: str | None = None) -> argparse.ArgumentParser:
    """The command line; with `verb` (a known verb), only that verb's module is imported and registered."""
    p = CommandParser(
        prog=prog,
        description="Build PyTorch 2.9 + CUDA images from matrix.yaml on a Docker engine with BuildKit, run the "
        "conformance suite's CPU checks inside each candidate, and only then move its tags.",
        epilog=EPILOG,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s (pytorch-cuda) {__version__}")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="COMMAND", parser_class=CommandParser)
    shared = shared_options()
    only = verb_module(verb) if verb is not None else None
    for module in (only,) if only is not None else VERB_MODULES:
        importlib.import_module(f"pytorch_cuda.cli.{module}").register(verbs, shared)
    p.set_defaults(make_parser=parser)  # `completion` generates from the parser without importing this module
    return p


def verb_parsers(cli: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each verb's own parser, by name (aliases included)."""
    return next(a for a in cli._actions if isinstance(a, argparse._SubParsersAction)).choices


def short_form(cli: argparse.ArgumentParser, argv: list[str]) -> list[str]:  # noqa: RET503 - cli.error exits
    """`build.py --target cu12 [options]` is `build.py build --target cu12 [options]`; other argv that starts with
    an option (but --help and --version) names no command, and is refused with the closest one suggested."""
    if not argv or not argv[0].startswith("-") or argv[0] in {"-h", "--help", "--version"}:
        return argv
    if any(token == "--target" or token.startswith("--target=") for token in argv):
        return ["build", *argv]
    verbs = verb_parsers(cli)
    guess = did_you_mean(argv[0].lstrip("-").split("=")[0], verbs).replace("'", "`")
    cli.error(
        f"{argv[0]} is not a command, and a command is required: one of {', '.join(verbs)} (e.g. "
        f"`{cli.prog} list`){guess}; only `{cli.prog} --target T` may leave out its command (build)"
    )


def parse(cli: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse verb-form argv; an unknown option is reported by its verb, whose --help lists the right ones."""
    args, extras = cli.parse_known_args(argv)
    verbs = verb_parsers(cli)
    if extras:
        verbs[args.verb].error(f"unrecognized arguments: {' '.join(extras)}")
    refusal = getattr(args, "refuse", None)  # a verb's check of options that parse but do not go together
    if refusal is not None and (message := refusal(args)) is not None:
        verbs[args.verb].error(message)
    return args
