"""The verbs of build.py, the old flags mapped onto them, --help on each, bad flags, and the repository root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda import cli
from pytorch_cuda.cli.legacy import VERBS, LegacyFlagError, translate
from pytorch_cuda.cli.root import find_root
from pytorch_cuda.errors import UserError


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["--target", "cu12"], ["build", "--target", "cu12"]),
        (["--target", "cu12", "--dry-run", "--json"], ["build", "--target", "cu12", "--dry-run", "--json"]),
        (["--list", "--json"], ["list", "--json"]),
        (["--render"], ["render"]),
        (["--check-render", "--matrix", "m.yaml"], ["render", "--check", "--matrix", "m.yaml"]),
        (["--lock", "--target", "cu12"], ["lock", "--target", "cu12"]),
        (["--report", "a.json", "b.json", "--out", "r"], ["report", "a.json", "b.json", "--out", "r"]),
        (["--json", "--report=a.json", "--out", "r"], ["report", "--json", "a.json", "--out", "r"]),
        (["--github-matrix", "--fleet", "f.yaml"], ["matrix", "--fleet", "f.yaml"]),
        (["--content-hash", "img:1"], ["content-hash", "img:1"]),
        (["--check-tag=v2.9.1", "--json"], ["check-tag", "v2.9.1", "--json"]),
        (
            ["--target", "cu12", "--push", "--push-candidate", "--registry", "h:5000"],
            ["push", "--target", "cu12", "--push-candidate", "--registry", "h:5000"],
        ),
        (["build", "--target", "cu12"], ["build", "--target", "cu12"]),
        (["--help"], ["--help"]),
    ],
)
def test_old_flags_become_verbs(old: list[str], new: list[str]) -> None:
    assert translate(old) == new


@pytest.mark.parametrize(
    ("old", "message"),
    [
        (["--list", "--render"], "--list and --render cannot go together"),
        (["--dry-run"], "a command is required"),
        (["--target", "cu12", "--push"], "--push and --registry go together"),
        (["--target", "cu12", "--registry", "h:5000"], "--push and --registry go together"),
        (["--target", "cu12", "--push-candidate"], "--push-candidate goes with --push"),
    ],
)
def test_old_flags_that_name_no_single_command_are_refused(old: list[str], message: str) -> None:
    with pytest.raises(LegacyFlagError, match=message):
        translate(old)


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_has_help(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main([verb, "--help"])
    assert info.value.code == 0
    assert f"usage: build.py {verb}" in capsys.readouterr().out


def test_verb_and_old_flag_print_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    pairs = [(["list", "--json"], ["--list", "--json"]), (["matrix"], ["--github-matrix"])]
    for verb_form, flag_form in pairs:
        assert cli.main(verb_form) == 0
        by_verb = json.loads(capsys.readouterr().out)
        assert cli.main(flag_form) == 0
        assert json.loads(capsys.readouterr().out) == by_verb
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
        (["--list", "--lock"], "cannot go together"),
        (["deploy"], "invalid choice: 'deploy'"),
    ],
)
def test_bad_flags_give_one_paragraph_with_the_fix_and_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert needle in " ".join(err.split())
    assert "Fix: run `build.py" in " ".join(err.split())
    assert "usage:" not in err
    assert "\n\n" not in err.strip()


def test_the_root_is_found_upward_or_given(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert find_root(None, root / "docs" / "reports") == root
    assert find_root(root, tmp_path) == root
    with pytest.raises(UserError, match="is not inside a pytorch-cuda repository"):
        find_root(None, tmp_path)
    assert cli.main(["list", "--root", str(tmp_path)]) == 2
    assert "is not a pytorch-cuda repository" in " ".join(capsys.readouterr().err.split())
    assert cli.main(["list", "--json", "--root", str(root)]) == 0


def test_the_missing_command_message_names_every_verb() -> None:
    import argparse

    from pytorch_cuda.cli import legacy
    from pytorch_cuda.cli.arguments import parser

    verbs = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(legacy.VERBS) == set(verbs.choices)
