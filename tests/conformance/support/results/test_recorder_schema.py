"""The committed result examples (schema 2) validate against pytorch_cuda_contract/results.schema.json, and so
does a document the writer produces with every optional metric field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.support.results.recorder import ResultsRecorder
from pytorch_cuda_contract.manifest import ManifestLookup
from pytorch_cuda_contract.results_format import HARNESS_VERSION

# The image these tests run in (scripts/suite-tests-in-image.sh) has no jsonschema: there the
# committed files are validated on the host instead (tests/repo/test_committed_schemas.py).
jsonschema = pytest.importorskip("jsonschema")

SUITE = Path(__file__).resolve().parents[4] / "conformance"
SCHEMA: dict[str, Any] = json.loads((SUITE.parent / "pytorch_cuda_contract" / "results.schema.json").read_text())
EXAMPLES = sorted((SUITE / "examples").glob("*.json"))


def schema2_examples() -> list[Path]:
    return [path for path in EXAMPLES if json.loads(path.read_text()).get("schema") == 2]


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_there_is_a_schema2_example() -> None:
    assert schema2_examples(), f"no schema-2 example among {EXAMPLES}"


@pytest.mark.parametrize("path", schema2_examples(), ids=lambda p: p.name)
def test_example_validates(path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text()), SCHEMA)


def test_writer_output_with_every_field_validates(tmp_path: Path) -> None:
    lookup = ManifestLookup(tmp_path / "manifest.json", "default", None, None)
    recorder = ResultsRecorder(tmp_path / "out.json", lookup, {"NCCL_NVLS_ENABLE": "0"})
    clocks = {"sm_mhz": 1980, "mem_mhz": 3201, "power_limit_w": 700.0, "throttle_reasons": ["sw_power_cap"]}
    recorder.record_metric(
        "t::a", "gemm.fp16.tflops", 745.7, "TFLOP/s", min=700.0, median=745.7, max=750.0, samples=10,
        rel_spread=0.067, rel_iqr=0.004, rel_error=0.002, stopped="target",
        peak=989.4, device={"index": 0, "name": "NVIDIA H200"}, clocks=clocks,
    )  # fmt: skip
    recorder.record_metric("t::a", "gemm.fp16.x_fp32", 15.0, "x", bound=7.4, bound_kind="min", contradicts="3x")
    recorder.record_metric("t::a", "sdpa.default_backend.fp16", "flash", "backend")
    recorder.record_metric("t::a", "unbounded", float("nan"), "1", bound=None, bound_kind="min", peak=None)
    recorder.record_dtype("bf16", "native", "776.6 TFLOP/s", 0)
    recorder.records["t::a"].outcome = "passed"
    recorder.fail_internal("conformance/conftest.py::pytest_configure", "boom")
    document: dict[str, Any] = recorder.document(1)
    jsonschema.validate(document, SCHEMA)
    assert document["measurements"]["gemm.fp16.x_fp32"]["test"] == "t::a"
    assert document["harness"] == HARNESS_VERSION
    assert document["measurements"]["gemm.fp16.tflops"]["stopped"] == "target"
    assert "unbounded" not in document["measurements"]
    assert "bound_kind" not in recorder.records["t::a"].metrics["unbounded"]
    assert document["totals"] == {"passed": 1, "failed": 1, "skipped": 0, "not_run": 0, "not_judged": 0, "total": 2}


def test_writer_rejects_unknown_fields_and_verdicts(tmp_path: Path) -> None:
    recorder = ResultsRecorder(None, ManifestLookup(tmp_path, "default", None, None), {})
    with pytest.raises(ValueError, match="unknown metric fields"):
        recorder.record_metric("t::a", "x", 1.0, "1", median_ms=3.0)
    with pytest.raises(ValueError, match="verdict"):
        recorder.record_dtype("bf16", "fast", "")
