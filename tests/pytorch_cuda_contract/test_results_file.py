"""pytorch_cuda_contract.results_file: schema 2 loads; anything else is one clear paragraph."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytorch_cuda_contract.results_file import ResultsFileError, load_results, parse_results
from pytorch_cuda_contract.results_format import FIRST_HARNESS, HARNESS_VERSION
from tests.support.recorded_runs import H100, H200, HALFWAY, T4

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [  # every committed results file written by a real run (each stored once)
    *sorted((ROOT / "conformance/examples").glob("*.json")),
    ROOT / "evidence/reports/h200/results.json",
    ROOT / "tests/fixtures/results/h200.json",
]
SCHEMA_FILE = ROOT / "pytorch_cuda_contract/results.schema.json"


def test_the_h200_run_reads_with_its_measurements() -> None:
    results = load_results(H200)
    assert results.schema == 2
    assert results.counts() == {"passed": 49, "skipped": 8}
    assert results.gpus[0].name == "NVIDIA H200"
    assert results.gpus[0].compute_capability == "9.0"
    assert results.gpus[0].sm_count == 132
    assert results.number("gemm.bf16.tflops") == pytest.approx(776.59, abs=0.01)
    assert results.measurement("gemm.fp16.tflops").peak == pytest.approx(989.4)  # type: ignore[union-attr]
    assert results.number("gemm.fp32.size") == 4096.0
    assert results.outcomes()["test_gemm_throughput[fp16]"] == "passed"
    assert results.missing == ()


def test_schema_2_reads_measurements_dtypes_clocks_and_image() -> None:
    results = load_results(H100)
    assert results.schema == 2
    assert results.image.ref == "pytorch-cuda:v2.9"
    assert [g.index for g in results.gpus] == [0, 1]
    assert results.gpus[0].memory_bytes == 80 * 1024**3
    assert results.dtypes["bf16"].verdict == "native"
    gemm = results.measurement("gemm.bf16.tflops")
    assert gemm is not None
    assert gemm.clocks is not None
    assert gemm.clocks.sm_mhz == 1980
    assert results.measurement("sdpa.default_backend.fp16").value == "flash"  # type: ignore[union-attr]
    assert load_results(T4).dtypes["bf16"].verdict == "emulated"


def test_a_run_that_stopped_half_way_loads_and_says_what_is_missing() -> None:
    results = load_results(HALFWAY)
    assert results.counts() == {"passed": 4, "failed": 1, "not_run": 2}
    assert results.failures() == (
        "conformance/test_amp.py::test_amp_training_step: torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB",
    )
    assert results.number("amp.step_ms.fp32") is None

    partial = parse_results(json.dumps({"schema": 2, "suite": "pytorch-cuda-conformance", "tests": {"t": 3}}))
    assert partial.tests == {}
    assert '"environment" is absent' in partial.missing
    assert "test t is not an object" in partial.missing


def test_non_finite_values_stay_visible_but_are_not_numbers() -> None:
    document = {
        "schema": 2,
        "suite": "pytorch-cuda-conformance",
        "measurements": {"gemm.fp16.tflops": {"value": "nan", "unit": "TFLOP/s"}},
    }
    metric = parse_results(json.dumps(document)).measurement("gemm.fp16.tflops")
    assert metric is not None
    assert metric.number is None
    assert metric.value != metric.value


def _error(data: str | bytes) -> str:
    with pytest.raises(ResultsFileError) as raised:
        parse_results(data, source="results.json")
    text = str(raised.value)
    assert "Fix:" in text
    assert "Traceback" not in text
    assert "\n\n" not in text
    return text.replace("\n", " ")


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ("", "is empty"),
        ("not json at all", "is not valid JSON"),
        ('{"schema": 2, "suite": "pytorch-cuda-conformance", "tests": {', "truncated"),
        (b"\xff\xfe\x00", "not UTF-8"),
        ("[1, 2]", "holds a JSON list"),
        ('{"schema": 2, "suite": "pytest-json-report"}', "is not a pytorch-cuda conformance results file"),
        ('{"suite": "pytorch-cuda-conformance"}', 'no integer "schema"'),
        ('{"schema": 0, "suite": "pytorch-cuda-conformance"}', "unknown results schema 0"),
        ('{"schema": 1, "suite": "pytorch-cuda-conformance"}', "schema 1, older than this reader understands"),
    ],
)
def test_unreadable_files_give_one_paragraph(data: str | bytes, needle: str) -> None:
    assert needle in _error(data)


def test_a_future_schema_says_to_update_the_reader() -> None:
    text = _error('{"schema": 3, "suite": "pytorch-cuda-conformance", "tests": {}}')
    assert "schema 3, newer than this reader understands" in text
    assert "git pull" in text


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match=r"no such\s+file"):  # wrapped where the path ends
        load_results(tmp_path / "nope.json")
    with pytest.raises(ResultsFileError, match=r"is\s+a\s+directory"):
        load_results(tmp_path)


@pytest.mark.parametrize("path", [H100, T4, HALFWAY])
def test_v2_fixtures_follow_the_suites_json_schema(path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text()), json.loads(SCHEMA_FILE.read_text()))


def test_deselected_tests_do_not_make_a_run_incomplete() -> None:
    tests = {"a": {"outcome": "passed"}, "b": {"outcome": "not_run", "message": "deselected (-m / -k)"}}
    document = {"schema": 2, "suite": "pytorch-cuda-conformance", "exit_status": 0, "tests": tests}
    assert parse_results(json.dumps(document)).complete
    assert not load_results(HALFWAY).complete  # a failed test and exit status 1
    document["exit_status"] = 2  # interrupted
    assert not parse_results(json.dumps(document)).complete


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_committed_example_reads_without_gaps(path: Path) -> None:
    results = load_results(path)
    assert results.tests
    assert results.missing == ()


def test_the_timing_harness_and_each_numbers_spread_are_read() -> None:
    """A file of the current harness names it and carries each timed number's spread; a file written before the
    field was measured by the first harness; a harness that is no version is a gap, read as the first."""
    document = json.loads(H200.read_text())
    assert parse_results(json.dumps(document)).harness == FIRST_HARNESS
    document["harness"] = HARNESS_VERSION
    gemm = document["measurements"]["gemm.bf16.tflops"]
    gemm.update(samples=31, rel_spread=0.041, rel_iqr=0.006, rel_error=0.0019, stopped="target")
    jsonschema.validate(document, json.loads(SCHEMA_FILE.read_text()))
    results = parse_results(json.dumps(document))
    assert results.harness == HARNESS_VERSION == 3
    metric = results.measurement("gemm.bf16.tflops")
    assert metric is not None
    assert (metric.samples, metric.rel_spread, metric.rel_iqr, metric.rel_error, metric.stopped) == (
        31, 0.041, 0.006, 0.0019, "target",
    )  # fmt: skip
    document["harness"] = "two"
    odd = parse_results(json.dumps(document))
    assert odd.harness == FIRST_HARNESS
    assert "\"harness\" is not a harness version (found 'two')" in odd.missing


def test_a_test_entry_with_its_outcome_alone_reads_as_it_always_did() -> None:
    """The store's judge view keeps each test's outcome only: such an entry reads as the full reader reads it (no
    phase, markers, metrics or message), as one immutable TestResult per test and outcome, shared across runs."""
    document = json.loads(H100.read_text(encoding="utf-8"))
    nodeid = next(k for k, e in document["tests"].items() if e.get("metrics"))
    views = [{**document, "tests": {nodeid: {"outcome": outcome}}} for outcome in ("failed", "failed", "passed")]
    first, again, passed = (parse_results(json.dumps(v)).tests[nodeid] for v in views)
    assert first is again
    assert first is not passed
    assert (first.outcome, passed.outcome) == ("failed", "passed")
    assert (first.phase, first.markers, first.duration_s, first.message, first.notes) == (None, (), None, None, ())
    assert dict(first.metrics) == {}
    assert parse_results(json.dumps(document)).tests[nodeid].metrics
    with pytest.raises(TypeError):  # shared by every run that has it: immutable
        first.metrics["gemm"] = None  # type: ignore[index]
