"""`build.py` run in this process (pytorch_cuda.cli.main): what it printed on stdout, its exit status checked."""

from __future__ import annotations

import pytest

from pytorch_cuda import cli


def printed(capsys: pytest.CaptureFixture[str], *argv: str, status: int = 0) -> str:
    """stdout of `build.py ARGV...`, which must exit with `status`; what was printed before is dropped."""
    capsys.readouterr()
    assert cli.main(list(argv)) == status
    return capsys.readouterr().out
