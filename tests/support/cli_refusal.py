"""`build.py` with bad words: it must exit 2; what it printed on stderr, its white space folded (a paragraph)."""

from __future__ import annotations

import pytest

from pytorch_cuda import cli


def refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    return " ".join(capsys.readouterr().err.split())
