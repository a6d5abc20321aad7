"""No silent last-wins and no abbreviations: a single-valued option given twice, or a prefix of an option, is
refused with exit 2 before anything runs; --target, --set (append) stay repeatable."""

from __future__ import annotations

import pytest

from pytorch_cuda import cli
from tests.support.cli_refusal import refusal


@pytest.mark.parametrize(
    ("twice", "verb"),
    [
        (["--flavour", "runtime", "--flavour", "jupyter"], "build"),
        (["--matrix", "matrix.yaml", "--matrix", "other.yaml"], "build"),
        (["--log-dir", "a", "--log-dir", "b"], "build"),
        (["--progress", "plain", "--progress", "quiet"], "build"),
        (["--progress=plain", "--progress=plain"], "push"),
    ],
)
def test_a_single_valued_option_given_twice_is_refused(
    twice: list[str], verb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--registry", "127.0.0.1:5000/ci"] if verb == "push" else []
    err = refusal([verb, "--target", "cu12", "--dry-run", *extra, *twice], capsys)
    assert f"{twice[0].partition('=')[0]} was given twice" in err
    assert "(exit status 2: bad input)" in err


def test_abbreviations_are_not_options(capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(["build", "--target", "cu12", "--dry"], capsys)
    assert "unrecognized arguments: --dry (did you mean '--dry-run'?)" in err
    assert "the following arguments are required: --target" in refusal(["build", "--targ", "cu12"], capsys)


def test_repeatable_options_still_repeat(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["build", "--target", "cu12", "--flavour", "jupyter", "--dry-run", "--json"]
    assert cli.main([*argv, "--set", "cu128-*.labels.a=1", "--set", "cu128-*.labels.b=2"]) == 0
    assert '"a": "1"' in capsys.readouterr().out
