"""Every `build.py` example in README.md, docs/cli.md, docs/bump.md and docs/security.md (a ```sh line, or an
inline `build.py ... --option` without placeholders) is a command the parser accepts as written, and the
ones that run offline and write nothing (list, matrix, bake, completion, check-tag, render --check, a build's
--dry-run, a report --diff of committed files) run as written and exit 0 (bump's --dry-run reads the indexes). A
build's --dry-run checks the engine as the build does, so those run in the integration tier, with the engine up."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytorch_cuda import cli
from pytorch_cuda.cli.arguments import parse, parser, short_form

if TYPE_CHECKING:
    import docker

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/cli.md", "docs/bump.md", "docs/security.md")
_INLINE = re.compile(r"`(?:python )?build\.py (?P<args>[^`]+)`")
_PLACEHOLDER = re.compile(r"[\[\]|…<>]|\.\.\.|\b[A-Z][A-Z_]+\b")  # [--x], A|B, <runner>, IMAGE: a synopsis
_COMMAND = re.compile(
    r"(?:^|&&\s*)(?:\.venv/bin/)?python3? build\.py (?P<args>[^#\n>|]*)"
)  # up to a comment or redirection


def examples() -> list[tuple[str, str]]:
    """(where, the arguments after build.py) of every example in a ```sh block."""
    found = []
    for name in DOCS:
        text = (ROOT / name).read_text(encoding="utf-8")
        for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL):
            for line in block.splitlines():
                match = _COMMAND.search(line)
                if match:
                    found.append((f"{name}: {line.strip()}", match["args"].strip()))
        for match in _INLINE.finditer(re.sub(r"```.*?```", "", text, flags=re.DOTALL)):
            # an example has an option; `build.py site` alone names the command (`build.py bul`: a typo shown)
            if "--" in match["args"] and not _PLACEHOLDER.search(match["args"]):
                found.append((f"{name}: `build.py {match['args']}`", match["args"].strip()))
    return list(dict.fromkeys(found))


EXAMPLES = examples()
RUNNABLE = ("list", "ci-matrix", "bake", "completion", "check-tag", "render --check", "report --diff docs/")
WRITES = ("--file", "--out", "--html", "--metadata-file", "--vex", "--pr-body")  # run only those that write nothing


def runnable(args: str) -> bool:
    words = args.split()
    offline = args.startswith(RUNNABLE) or ("--dry-run" in words and "bump" not in words)
    return offline and not any(word.split("=")[0] in WRITES for word in words)


def test_the_docs_have_examples() -> None:
    assert len(EXAMPLES) >= 20
    assert any(args == "--target cu12" for _, args in EXAMPLES)  # README's command 1


@pytest.mark.parametrize(("where", "args"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_every_example_parses(where: str, args: str) -> None:
    cli_parser = parser()
    namespace = parse(cli_parser, short_form(cli_parser, shlex.split(args)))
    assert callable(namespace.run), where


def engine_free(args: str) -> bool:
    """A build's --dry-run checks the engine as the build does (down: exit 2); the other runnable ones need none."""
    return "--dry-run" not in args.split()


OFFLINE = [(w, a) for w, a in EXAMPLES if runnable(a) and engine_free(a)]
DRY_RUNS = [(w, a) for w, a in EXAMPLES if runnable(a) and not engine_free(a)]


def test_the_docs_have_dry_runs() -> None:
    assert any(args == "build --target cu12 --dry-run" for _, args in DRY_RUNS)


@pytest.mark.parametrize(("where", "args"), OFFLINE, ids=[w for w, _ in OFFLINE])
def test_the_offline_examples_run(where: str, args: str, capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(shlex.split(args), start=ROOT)
    assert status == 0, f"{where}: exit {status}: {capsys.readouterr().err[-600:]}"


@pytest.mark.integration
@pytest.mark.parametrize(("where", "args"), DRY_RUNS, ids=[w for w, _ in DRY_RUNS])
def test_the_dry_run_examples_run_with_an_engine(
    where: str, args: str, client: docker.DockerClient, capsys: pytest.CaptureFixture[str]
) -> None:
    """As a user runs them: with the Docker engine up (the `client` fixture fails when it is not)."""
    status = cli.main(shlex.split(args), start=ROOT)
    assert status == 0, f"{where}: exit {status}: {capsys.readouterr().err[-600:]}"
