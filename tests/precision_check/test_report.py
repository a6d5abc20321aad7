"""The JSON report: its schema file, and the dataclasses' round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from precision_check.report import Report, Verdict, report_from_json, to_json
from precision_check.verdict import decide
from tests.precision_check.measurements import healthy_h200, with_floor

# The image these tests run in (scripts/suite-tests-in-image.sh) has no jsonschema: there the
# committed files are validated on the host instead (tests/report/test_committed_schemas.py).
jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads((Path(__file__).parents[2] / "precision_check" / "report.schema.json").read_text())
RECORDED = sorted((Path(__file__).parent / "recorded").glob("*.json"))


def _report() -> Report:
    m = with_floor(healthy_h200(), 0.002)
    return Report("model.py:factory", "2026-12-02T18:00:00+00:00", m, decide(m))


def test_round_trip_is_exact_and_valid() -> None:
    report = _report()
    text = to_json(report)
    jsonschema.validate(json.loads(text), SCHEMA)
    assert report_from_json(text) == report


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
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
    assert doc["version"] == 4
    assert doc["noise_floor"]["rel_diff_max"] > 0
    old = {key: value for key, value in doc.items() if key != "noise_floor"} | {"version": 1}
    report = report_from_json(json.dumps(old))
    assert report.measurements.noise_floor is None
    assert report.measurements.runs == _report().measurements.runs
    with pytest.raises(ValueError, match="version 1 or 2 or 3 or 4"):
        report_from_json(json.dumps(doc | {"version": 5}))


def test_schema_wants_the_floor_in_version_2() -> None:
    doc = json.loads(to_json(_report()))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({key: value for key, value in doc.items() if key != "noise_floor"}, SCHEMA)
    jsonschema.validate(doc | {"noise_floor": None}, SCHEMA)
