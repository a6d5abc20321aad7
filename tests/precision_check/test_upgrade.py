"""`python -m precision_check.upgrade OLD.json NEW.json`: an older report rewritten as version 5, with its judged
lines; bad input is one paragraph and exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from precision_check import upgrade
from precision_check.check_report import VERSION, report_from_json
from precision_check.terminal_table import table_rows
from tests.support.precision_measurements import RECORDED


@pytest.mark.parametrize("name", ["transformer.h200.json", "overflow_mlp.cpu.json", "linear_regression.cpu.json"])
def test_an_old_report_becomes_the_current_version_with_the_same_measurements(tmp_path: Path, name: str) -> None:
    old_text = (RECORDED / name).read_text()
    assert json.loads(old_text)["version"] < VERSION
    new = tmp_path / "new" / name
    assert upgrade.main([str(RECORDED / name), str(new)]) == 0
    doc = json.loads(new.read_text())
    assert doc["version"] == VERSION == 5
    old, current = report_from_json(old_text), report_from_json(new.read_text())
    assert current.measurements == old.measurements
    assert current.verdict == old.verdict
    header, rows = table_rows(old)
    assert (doc["display"]["header"], doc["display"]["rows"]) == (header, rows)


def test_a_file_that_is_not_a_report_is_one_paragraph_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "pytorch-cuda/precision-check", "version": 9}))
    assert upgrade.main([str(bad), str(tmp_path / "new.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{bad} is not a pytorch-cuda/precision-check report this precision-check reads" in err
    assert "versions 1 to 5" in err
    assert not (tmp_path / "new.json").exists()
    assert upgrade.main([str(tmp_path / "missing.json"), str(tmp_path / "new.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
