"""The verbs of build.py, the short form `--target T` of build, --help on each, bad flags, and the repository root."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytorch_cuda import cli
from pytorch_cuda.cli import arguments
from pytorch_cuda.cli.arguments import parser, short_form
from pytorch_cuda.cli.options import CommandParser, shared_options
from pytorch_cuda.cli.root import find_root
from pytorch_cuda.errors import UserError
from tests.support.cli_refusal import refusal

VERBS = (
    "build", "push", "render", "lock", "list", "report", "bump", "ci-matrix", "content-hash", "check-tag", "release",
    "results", "site", "audit", "bake", "completion", "dashboard", "bot",
)  # fmt: skip


def test_the_short_form_is_build() -> None:
    cli = parser()
    assert short_form(cli, ["--target", "cu12", "--dry-run"]) == ["build", "--target", "cu12", "--dry-run"]
    assert short_form(cli, ["--json", "--target=cu12"]) == ["build", "--json", "--target=cu12"]
    for argv in (["list"], ["--help"], ["--version"], []):
        assert short_form(cli, argv) == argv


@pytest.mark.parametrize(("argv", "guess"), [(["--lst", "--json"], "`list`"), (["--rendr"], "`render`")])
def test_an_option_without_a_command_is_refused_with_a_guess(
    argv: list[str], guess: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refusal(argv, capsys)
    assert f"{argv[0]} is not a command, and a command is required" in err
    assert f"(did you mean {guess}?)" in err


def test_release_goes_through_the_main_parser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELEASE_KEY_PASSPHRASE", "p")  # keygen encrypts the private key with it
    with pytest.raises(SystemExit) as info:
        cli.main(["release", "verfy", "x"])
    assert info.value.code == 2
    assert "(did you mean 'verify'?)" in " ".join(capsys.readouterr().err.split())
    key, public = str(tmp_path / "a.key"), str(tmp_path / "a.pub")
    assert cli.main(["release", "keygen", "--key", key, "--public-key", public, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["public_key"] == public
    assert cli.main(["release", "keygen", "--key", key, "--public-key", public, "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]


def test_the_verb_table_is_what_each_module_registers() -> None:
    """arguments.VERB_MODULES names, for each verb module, the verbs it registers (so a command loads only its
    own module), and a parser built for one verb holds that module's verbs alone."""
    for module, names in arguments.VERB_MODULES.items():
        cli = CommandParser(prog="build.py")
        verbs = cli.add_subparsers(dest="verb", parser_class=CommandParser)
        importlib.import_module(f"pytorch_cuda.cli.{module}").register(verbs, shared_options())
        assert tuple(verbs.choices) == names, module
    for verb in (*VERBS, "matrix"):
        one = arguments.verb_parsers(parser(verb=verb))
        assert verb in one
        assert set(one) < set(VERBS) | {"matrix"}


def test_release_verify_loads_no_other_verb_s_code() -> None:
    """`build.py release ...` imports the release verb's module, not audit's, the bots' or the build's (issue 51:
    verify's start-up)."""
    code = ("import sys; from pytorch_cuda.cli.arguments import parser; parser(verb='release'); "
            "print(' '.join(m for m in sys.modules if m.startswith('pytorch_cuda.')))")  # fmt: skip
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "pytorch_cuda.cli.releasing" in loaded
    for other in ("pytorch_cuda.cli.auditing", "pytorch_cuda.audit.audit_files", "pytorch_cuda.cli.bot_verbs",
                  "pytorch_cuda.cli.building", "pytorch_cuda.image_build.pipeline"):  # fmt: skip
        assert other not in loaded


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_has_help(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main([verb, "--help"])
    assert info.value.code == 0
    assert f"usage: build.py {verb}" in capsys.readouterr().out


def test_the_verbs_print_json(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["list", "--json"], ["ci-matrix"], ["matrix"]):
        assert cli.main(argv) == 0
        assert json.loads(capsys.readouterr().out)
    assert cli.main(["render", "--check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["up_to_date"] is True


def test_build_and_push_verbs_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["build", "--target", "cu12", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["variant"] == "cu128-runtime"
    assert plan["push"] is None
    assert cli.main(["push", "--target", "cu12", "--registry", "127.0.0.1:5000/ci", "--candidate", "--dry-run"]) == 0
    assert '"alone' not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["list", "--dry-run"], "unrecognized arguments: --dry-run"),
        (["build"], "the following arguments are required: --target"),
        (["push", "--target", "cu12"], "the following arguments are required: --registry"),
        (["bump", "--flavour", "jupyter"], "unrecognized arguments: --flavour jupyter"),
        (["--lst", "--json"], "--lst is not a command"),
        (["deploy"], "invalid choice: 'deploy'"),
    ],
)
def test_bad_flags_give_one_paragraph_with_the_fix_and_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refusal(argv, capsys)
    assert needle in err
    assert "Fix: run `build.py" in err
    assert "usage:" not in err
    assert "\n\n" not in err.strip()


def test_the_root_is_found_upward_or_given(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert find_root(None, root / "docs") == root
    assert find_root(root, tmp_path) == root
    with pytest.raises(UserError, match="is not inside a pytorch-cuda repository"):
        find_root(None, tmp_path)
    assert cli.main(["list", "--root", str(tmp_path)]) == 2
    assert "is not a pytorch-cuda repository" in " ".join(capsys.readouterr().err.split())
    assert cli.main(["list", "--json", "--root", str(root)]) == 0


def test_every_verb_is_listed_here() -> None:
    verbs = arguments.verb_parsers(parser())
    assert set(VERBS) | {"matrix"} == set(verbs)  # `matrix`: ci-matrix's alias, its name before 2026-12


def test_rotate_root_with_half_a_new_root_key_is_a_paragraph_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    half = ["release", "rotate-root", "--root-key", str(tmp_path / "root.key"), "--root-public-key", "root.pub"]
    assert cli.main([*half, "--new-root-key", str(tmp_path / "new.key")]) == 2
    assert "rotate-root was given --new-root-key without --new-root-public-key" in capsys.readouterr().err
    assert cli.main([*half, "--new-root-public-key", str(tmp_path / "new.pub")]) == 2
    assert "rotate-root was given --new-root-public-key without --new-root-key" in capsys.readouterr().err


def test_every_command_has_a_description_and_examples_in_its_help() -> None:
    """Before: list, render, site, matrix, content-hash and check-tag had no description, and list, matrix,
    content-hash and check-tag no example."""
    verbs = arguments.verb_parsers(arguments.parser())
    missing = [
        f"{name}: {'no description' if not command.description else 'no examples'}"
        for name, command in verbs.items()
        if not command.description or not (command.epilog or "").startswith("examples:")
    ]
    assert not missing, missing
