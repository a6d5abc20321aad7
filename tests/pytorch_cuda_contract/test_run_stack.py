"""pytorch_cuda_contract.carried_stack's RunStack and the results file's "stack" and "not_judged": which stack a run
was on, read back typed; every committed results file (none named its stack) still reads, as image or host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytorch_cuda_contract.carried_stack import (
    MARKER,
    CarriedStack,
    CarriedStackError,
    RunStack,
    parse_run_stack,
    read_run_stack,
)
from pytorch_cuda_contract.results_file import load_results, parse_results
from pytorch_cuda_contract.results_format import NOT_JUDGED_PREFIX, OUTCOMES
from pytorch_cuda_contract.results_model import image_label
from tests.support.recorded_runs import H200, HALFWAY

ROOT = Path(__file__).resolve().parents[2]
SCHEMA: dict[str, Any] = json.loads((ROOT / "pytorch_cuda_contract/results.schema.json").read_text())
STACK_SCHEMA: dict[str, Any] = {"$defs": SCHEMA["$defs"], "$ref": "#/$defs/stack"}
CARRIED = CarriedStack(
    variant="cu128-runtime",
    lock="gpu/shipped-stack/cu128-runtime-py312.lock",
    lock_sha256="ab" * 32,
    root="/root/shipped-stack",
    prefix="/root/shipped-stack/venv",
    python="3.12",
    image_python="3.13",
    image_venv="/opt/pytorch",
    packages={"torch": "2.9.1+cu128", "triton": "3.5.1", "nvidia-nccl-cu12": "2.27.5"},
)


# runs of the carried stack, which name their stack
CARRIED_RUNS = ("evidence/shipped-stack/", "evidence/fault-coverage/h100-shipped/")


def _committed_results(recorded: bool = False) -> list[Path]:
    found = []
    for path in sorted([*ROOT.glob("evidence/**/*.json"), *ROOT.glob("tests/fixtures/**/*.json")]):
        try:
            document = json.loads(path.read_text())
        except ValueError:
            continue
        named = str(path.relative_to(ROOT)).startswith(CARRIED_RUNS)
        if isinstance(document, dict) and document.get("suite") == "pytorch-cuda-conformance" and named == recorded:
            found.append(path)
    return found if recorded else [*found, *sorted(ROOT.glob("conformance/examples/*.json"))]


def _write_marker(prefix: Path, stack: CarriedStack = CARRIED) -> None:
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / MARKER).write_text(json.dumps(stack.as_json()))


def test_the_in_image_manifest_wins_over_a_carried_marker(tmp_path: Path) -> None:
    """A carried marker inside an image changes nothing: the run is on the image, every check as strict."""
    _write_marker(tmp_path / "venv")
    manifest = tmp_path / "manifest.json"
    manifest.write_text("{}")
    stack = read_run_stack(str(tmp_path / "venv"), str(manifest))
    assert stack == RunStack("image")
    assert stack.carried is None
    assert stack.library_root is None


def test_a_marker_on_a_bare_host_is_a_carried_stack(tmp_path: Path) -> None:
    _write_marker(tmp_path / "venv")
    stack = read_run_stack(str(tmp_path / "venv"), str(tmp_path / "no-manifest.json"))
    assert stack.kind == "carried"
    assert stack.carried == CARRIED
    assert stack.library_root == "/root/shipped-stack/venv/lib/python3.12/site-packages/nvidia"
    assert read_run_stack(str(tmp_path), str(tmp_path / "no-manifest.json")) == RunStack("host")


def test_a_broken_marker_is_host_with_the_error(tmp_path: Path) -> None:
    (tmp_path / MARKER).write_text('{"schema": 1, "variant": "cu128-runtime"')
    stack = read_run_stack(str(tmp_path), str(tmp_path / "no-manifest.json"))
    assert stack.kind == "host"
    assert stack.error is not None
    assert MARKER in stack.error


def test_a_run_stack_says_carried_only_with_its_marker() -> None:
    with pytest.raises(CarriedStackError):
        RunStack("carried")
    with pytest.raises(CarriedStackError):
        RunStack("image", CARRIED)
    with pytest.raises(CarriedStackError):
        RunStack("container")


@pytest.mark.parametrize("stack", [RunStack("image"), RunStack("host"), RunStack("carried", CARRIED)])
def test_the_stack_object_round_trips_and_validates(stack: RunStack) -> None:
    document = stack.as_json()
    jsonschema.validate(document, STACK_SCHEMA)
    assert parse_run_stack(document) == stack
    if stack.carried is not None:
        names = ("variant", "root", "prefix", "lock", "lock_sha256", "python", "image_python", "packages")
        assert set(names) <= set(document)


def test_the_schema_refuses_a_carried_stack_without_its_root_and_a_host_with_one() -> None:
    schema = STACK_SCHEMA
    document = RunStack("carried", CARRIED).as_json()
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in document.items() if k != "root"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"kind": "host", "root": "/x"}, schema)


def _document(**overrides: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(H200.read_text())
    document.update(overrides)
    return document


def test_a_carried_run_reads_typed_with_its_not_judged_checks() -> None:
    document = _document(stack=RunStack("carried", CARRIED).as_json())
    nodeid = "conformance/test_libraries.py::test_ldconfig_has_no_second_cuda_library"
    reason = f"{NOT_JUDGED_PREFIX} the loader cache (ldconfig -p) and /usr/lib are the host's"
    document["tests"][nodeid] = {
        "outcome": "not_judged",
        "phase": "call",
        "markers": ["cpu"],
        "duration_s": 0.01,
        "message": reason,
        "metrics": {},
        "notes": [],
    }
    document["totals"]["not_judged"] = 1
    jsonschema.validate(document, SCHEMA)
    results = parse_results(json.dumps(document))
    assert results.stack == RunStack("carried", CARRIED)
    assert results.stack.recorded
    assert results.counts()["not_judged"] == 1
    assert results.totals["not_judged"] == 1
    assert results.complete, "a run with not-judged checks and no failure passed"
    assert results.failures() == ()
    assert image_label(results) == "pytorch-cuda cu128-runtime stack carried to a bare host, torch 2.9.1+cu128"


def test_a_file_without_not_judged_in_its_totals_reads_it_as_zero() -> None:
    results = load_results(HALFWAY)
    assert results.totals["not_judged"] == 0
    assert set(OUTCOMES) <= set(results.totals)


def test_a_malformed_stack_is_listed_as_missing_and_read_as_host() -> None:
    results = parse_results(json.dumps(_document(stack={"kind": "carried", "variant": "cu128-runtime"})))
    assert results.stack.kind == "host"
    assert not results.stack.recorded
    assert any('"stack" cannot be read' in item for item in results.missing)


@pytest.mark.parametrize("path", _committed_results(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_committed_results_file_reads_with_an_inferred_stack(path: Path) -> None:
    """None of them named its stack: a manifest of an image found means inside the image, else a bare host (no
    manifest, or a bare host's expectations file). None ran on a carried stack."""
    results = load_results(path)
    assert not results.stack.recorded
    manifest = results.manifest_content
    in_image = bool(results.manifest.get("found")) and manifest.get("target") not in (None, "bare-host")
    assert results.stack.kind == ("image" if in_image else "host")
    assert results.totals.get("not_judged", 0) == 0


def test_the_committed_runs_hold_both_inferred_kinds() -> None:
    kinds = {load_results(path).stack.kind for path in _committed_results()}
    assert kinds == {"image", "host"}


HOST_ONLY = (
    "test_debian_packages_match_the_base_record",
    "test_ldconfig_has_no_second_cuda_library",
    "test_python_and_venv_match_manifest",
)
# not judged only with its cause named: the host's toolchain linked Inductor's kernels against a static libstdc++
INDUCTOR_CPU = "test_inductor_cpu_generates_cpp_and_matches_eager"


@pytest.mark.parametrize("path", _committed_results(recorded=True), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_committed_carried_run_names_its_stack_and_judges_only_host_checks_not(path: Path) -> None:
    """The shipped stack's runs on a GPU host: carried, the image's pins, and not_judged only where the image's own
    files have no equivalent there (the Python and venv, the loader cache, the base image's packages; in a whole-suite
    run all three), or the CPU Inductor check with the host toolchain's cause."""
    results = load_results(path)
    assert results.stack.recorded
    assert results.stack.kind == "carried"
    assert results.stack.carried is not None
    assert results.stack.carried.packages["torch"] == "2.9.1"
    not_judged = {n.split("::")[-1]: t for n, t in results.tests.items() if t.outcome == "not_judged"}
    assert set(not_judged) <= {*HOST_ONLY, INDUCTOR_CPU}
    if INDUCTOR_CPU in not_judged:
        assert "carry a libstdc++ of their own" in str(not_judged[INDUCTOR_CPU].message)
    if path.name.startswith("untouched"):  # the whole suite
        assert set(HOST_ONLY) <= set(not_judged)
        assert results.tests["conformance/test_libraries.py::test_cuda_libraries_loaded_once"].outcome == "passed"
