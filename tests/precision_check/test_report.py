"""The JSON report: its schema file, the dataclasses' round trip, and the judged lines it carries (version 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from precision_check.check_report import Report, Verdict, report_from_json
from precision_check.display import display_of, to_json
from precision_check.terminal_table import render, table_rows
from precision_check.verdict import decide
from tests.support.precision_measurements import RECORDED, healthy_h200, with_floor

# The image these tests run in (scripts/suite-tests-in-image.sh) has no jsonschema: there the
# committed files are validated on the host instead (tests/repo/test_committed_schemas.py).
jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads((Path(__file__).parents[2] / "precision_check" / "report.schema.json").read_text())
RECORDED_REPORTS = sorted(RECORDED.glob("*.json"))


def _report() -> Report:
    m = with_floor(healthy_h200(), 0.002)
    return Report("model.py:factory", "2026-12-02T18:00:00+00:00", m, decide(m))


def test_round_trip_is_exact_and_valid() -> None:
    report = _report()
    text = to_json(report)
    jsonschema.validate(json.loads(text), SCHEMA)
    assert report_from_json(text) == report


@pytest.mark.parametrize("path", RECORDED_REPORTS, ids=lambda p: p.name)
def test_recorded_reports_match_the_schema(path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text()), SCHEMA)


def test_schema_rejects_a_wrong_schema_name_and_a_bad_dtype() -> None:
    doc = json.loads(to_json(_report()))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc | {"schema": "something-else"}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc | {"verdict": {**doc["verdict"], "dtype": "fp8"}}, SCHEMA)


def test_non_finite_numbers_never_reach_json() -> None:
    report = _report()
    broken = Report(report.target, report.created_at, report.measurements, Verdict("fp32", "x", (), {"v": None}))
    assert "NaN" not in to_json(broken)


def test_a_version_1_report_still_reads_back_without_a_floor() -> None:
    doc = json.loads(to_json(_report()))
    assert doc["version"] == 5
    assert doc["noise_floor"]["rel_diff_max"] > 0
    old = {key: value for key, value in doc.items() if key != "noise_floor"} | {"version": 1}
    report = report_from_json(json.dumps(old))
    assert report.measurements.noise_floor is None
    assert report.measurements.runs == _report().measurements.runs
    with pytest.raises(ValueError, match="version 1 or 2 or 3 or 4 or 5"):
        report_from_json(json.dumps(doc | {"version": 6}))


def test_schema_wants_the_floor_in_version_2() -> None:
    doc = json.loads(to_json(_report()))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({key: value for key, value in doc.items() if key != "noise_floor"}, SCHEMA)
    jsonschema.validate(doc | {"noise_floor": None}, SCHEMA)


def test_the_report_carries_the_lines_precision_check_judged() -> None:
    """The table the terminal prints, cell for cell, the facts and the kind's meaning: a page shows them without
    judging again."""
    report = _report()
    display = json.loads(to_json(report))["display"]
    header, rows = table_rows(report)
    assert (display["header"], display["rows"]) == (header, rows)
    assert all(" ".join(row[:2]) in " ".join(render(report).split()) for row in rows)
    assert tuple(display["facts"]) == display_of(report).facts
    assert display["facts"][0].startswith("fp32 noise floor: 0.2% at most along the way")
    assert display["kind_meaning"] == "a lower precision is safe for this model and faster on this GPU"


def test_schema_wants_the_judged_lines_from_version_5() -> None:
    doc = json.loads(to_json(_report()))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({key: value for key, value in doc.items() if key != "display"}, SCHEMA)
    old = {key: value for key, value in doc.items() if key != "display"} | {"version": 4}
    jsonschema.validate(old, SCHEMA)
