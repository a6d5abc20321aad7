"""Every committed JSON document validates against its schema, on the host (no torch needed).

The suite's own tests run inside the image, which carries no jsonschema; so the files the
writers produced on real runs (conformance examples, the H200 report's results, recorded
precision-check runs) are validated here, where CI always runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS_SCHEMA: dict[str, Any] = json.loads((ROOT / "pytorch_cuda_contract" / "results.schema.json").read_text())
CHECK_SCHEMA: dict[str, Any] = json.loads((ROOT / "precision_check" / "report.schema.json").read_text())


def _schema2(paths: list[Path]) -> list[Path]:
    return [path for path in paths if json.loads(path.read_text()).get("schema") == 2]


RESULTS = _schema2(
    [*sorted((ROOT / "conformance" / "examples").glob("*.json")), ROOT / "evidence/reports/h200/results.json"]
)
CHECKS = sorted((ROOT / "tests" / "precision_check" / "recorded").glob("*.json"))


@pytest.mark.parametrize("schema", [RESULTS_SCHEMA, CHECK_SCHEMA], ids=["results", "precision-check"])
def test_schema_files_are_valid_draft_2020_12(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)


def test_there_are_committed_documents_to_check() -> None:
    assert RESULTS, "no schema-2 results file is committed under conformance/examples or evidence/reports/h200"
    assert CHECKS, "no recorded precision-check run under tests/precision_check/recorded"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_results_validate(path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text()), RESULTS_SCHEMA)


@pytest.mark.parametrize("path", CHECKS, ids=lambda p: p.name)
def test_recorded_precision_checks_validate(path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text()), CHECK_SCHEMA)


def test_the_results_schema_rejects_a_broken_document() -> None:
    document = json.loads(RESULTS[0].read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document | {"schema": "two"}, RESULTS_SCHEMA)
    first = next(iter(document["tests"]))
    broken = document | {"tests": {first: document["tests"][first] | {"outcome": "sort of"}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, RESULTS_SCHEMA)
