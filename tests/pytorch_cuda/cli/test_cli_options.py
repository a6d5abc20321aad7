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


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["build", "--target", "cu12", "--skip-checks", "--recheck"],
            "--recheck: not allowed with argument --skip-checks",
        ),
        (["--target", "cu12", "--recheck", "--skip-checks"], "--skip-checks: not allowed with argument --recheck"),
        (["completion", "bash", "--json"], "--json has no JSON to give: the completion script is bash text"),
        (["audit", "--service", "pypi", "--osv-url", "http://x/v1/query"], "is used only with --service osv"),
        (["audit", "--osv-url", "http://x/v1/query"], "the service is pypi"),
        (["push", "--target", "cu12", "--registry", ""], "--registry is empty: push needs a registry"),
        (["push", "--target", "cu12", "--registry", " "], "--registry is empty"),
    ],
)
def test_options_that_parse_but_cannot_go_together_are_refused_before_any_work(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: each exited 0 (a build with its checks skipped, the bash script, an audit that ignored the URL, a
    build that pushed nothing); now exit 2 with one paragraph, before the engine or the network is touched."""
    err = refusal(argv, capsys)
    assert says in err
    assert "Fix: run `build.py" in err
