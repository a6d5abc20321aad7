"""Suite plumbing: options, markers, GPU gating, manifest and result fixtures.

Works with ``-p no:cacheprovider`` from any working directory and without any
pytest.ini/pyproject: everything is registered here.  torch is imported lazily
so that an image whose torch cannot even be imported (a deleted libcudnn, say)
still produces a JSON report in which every test module fails with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from conformance.support import SUITE_SOURCE
from conformance.support.probes.fp32_policy import fp32_policy_snapshot
from conformance.support.probes.gpu_gate import gate_on_gpus, refuse_without_gpu
from conformance.support.processes.background import (
    CPU_COMPILE_TESTS,
    cpu_compile_result,
    start_background_jobs,
    start_compile_probe_early,
    stop_background_jobs,
)
from conformance.support.processes.env import apply_safe_distributed_env
from conformance.support.results.identity import check_writable, find_run_stack
from conformance.support.results.recorder import RecordDtype, RecordMetric, RecordNote, ResultsRecorder
from pytorch_cuda_contract import paths
from pytorch_cuda_contract.carried_stack import RunStack
from pytorch_cuda_contract.manifest import Manifest, ManifestLookup, find_manifest

if TYPE_CHECKING:
    import torch

    from conformance.support.workloads.gemm_bench import GemmBench

# Before any test can start a process: NVLink multicast off (see support/processes/env.py).
DISTRIBUTED_ENV: Final = apply_safe_distributed_env()

MARKERS: Final = {
    "cpu": "runs without a GPU (CI runs `-m cpu`)",
    "gpu": "needs one visible GPU; a run that selects one with no GPU visible stops (exit 4); --require-gpu: fails",
    "multigpu": "needs >= 2 visible GPUs",
}
# Not a mode: a check that no plausible fault can trip documents a fact and gates nothing. The results file says
# so ("informational": the reason), the report lists it apart, and the fault-coverage matrix leaves it out.
INFORMATIONAL_MARKER: Final = "informational(reason): documents a fact that no plausible fault can cross; not gated"
RECORDER_KEY: Final = pytest.StashKey[ResultsRecorder]()
MANIFEST_KEY: Final = pytest.StashKey[ManifestLookup]()
STACK_KEY: Final = pytest.StashKey[RunStack]()
FP32_POLICY_AT_START_KEY: Final = pytest.StashKey[dict[str, object]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "pytorch-cuda conformance")
    group.addoption(
        "--manifest",
        default=None,
        metavar="FILE",
        help=f"build manifest / expectations file (default: ${paths.MANIFEST_ENV}, then {paths.MANIFEST_PATH})",
    )
    group.addoption("--conformance-json", default=None, metavar="PATH", help="write the JSON result file here")
    group.addoption(
        "--require-gpu", action="store_true", default=False, help="no visible GPU is a failure instead of a skip"
    )
    group.addoption(
        "--require-gpus",
        type=int,
        default=0,
        metavar="N",
        help="fewer than N visible GPUs is a failure (gpu/multigpu tests fail instead of skipping)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Never raises: a fault found here becomes a named failing check in the JSON, not an internal error."""
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
    config.addinivalue_line("markers", INFORMATIONAL_MARKER)
    problem: str | None = None
    try:
        lookup = find_manifest(config.getoption("manifest"), os.environ)
    except Exception as exc:
        lookup = ManifestLookup(Path(str(config.getoption("manifest") or "")), "error", None, f"{exc}")
        problem = f"reading the manifest raised {type(exc).__name__}: {exc}"
    config.stash[MANIFEST_KEY] = lookup
    json_option = config.getoption("conformance_json")
    unwritable = check_writable(Path(json_option)) if json_option else None
    if unwritable is not None:
        raise pytest.UsageError(unwritable)  # bad input: one paragraph, exit status 4, before any test runs
    stack = find_run_stack()
    config.stash[STACK_KEY] = stack
    recorder = ResultsRecorder(Path(json_option) if json_option else None, lookup, DISTRIBUTED_ENV, stack)
    config.stash[RECORDER_KEY] = recorder
    config.pluginmanager.register(recorder, "conformance-results")
    start_compile_probe_early(config)  # before this process's own `import torch` (the snapshot below)
    try:
        config.stash[FP32_POLICY_AT_START_KEY] = fp32_policy_snapshot()
    except Exception as exc:  # fp32_policy_snapshot already guards each read; this is the last line
        failed: dict[str, object] = {"error": f"{type(exc).__name__}: {exc}"}
        config.stash[FP32_POLICY_AT_START_KEY] = failed
    if stack.error is not None:
        problem = (f"{problem}; " if problem else "") + (
            f"the venv holds a carried-stack marker that cannot be read ({stack.error}), so the run cannot say "
            "which stack it is on and every check judges as on a bare host; make the venv again with the carrier"
        )
    if problem is not None:
        recorder.fail_internal("conformance/conftest.py::pytest_configure", problem)


def _in_suite(item: pytest.Item) -> bool:
    return SUITE_SOURCE in Path(str(item.path)).resolve().parents


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unmarked = [i.nodeid for i in items if _in_suite(i) and not any(i.get_closest_marker(m) for m in MARKERS)]
    if unmarked:
        raise pytest.UsageError(f"conformance tests without a cpu/gpu/multigpu marker: {unmarked}")
    # The checks waiting for the background CPU compile go last, so that it overlaps everything else.
    items.sort(key=lambda item: item.name in CPU_COMPILE_TESTS)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Stop when no GPU is visible to a run whose selection (-m, -k, paths, node ids) holds a GPU check (fail
    closed: one paragraph, exit status 4); otherwise start the slow CPU-only work (Inductor C++ compile, gloo
    ranks) now, so that it overlaps the GPU checks."""
    refusal = refuse_without_gpu(session.config, session.items)
    if refusal is not None:
        raise pytest.UsageError(refusal)
    start_background_jobs(session.config, [item.name for item in session.items])


def pytest_unconfigure(config: pytest.Config) -> None:
    stop_background_jobs(config)


@pytest.fixture(scope="session")
def cpu_compile_probe(pytestconfig: pytest.Config) -> dict[str, object]:
    """The background CPU-compile probe's result (vector ISA, OpenMP, Inductor C++ compile)."""
    return cpu_compile_result(pytestconfig)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _in_suite(item):
        gate_on_gpus(item)


@pytest.fixture(scope="session")
def manifest_lookup(pytestconfig: pytest.Config) -> ManifestLookup:
    return pytestconfig.stash[MANIFEST_KEY]


@pytest.fixture(scope="session")
def run_stack(pytestconfig: pytest.Config) -> RunStack:
    """The stack the run is on (image, carried or host): checks that judge the image's own filesystem judge the
    carried stack's equivalent on a carried one, or report not judged (support/results/not_judged.py)."""
    return pytestconfig.stash[STACK_KEY]


@pytest.fixture(scope="session")
def optional_manifest(manifest_lookup: ManifestLookup) -> Manifest | None:
    """The manifest, None on a bare host; fails if a named manifest is broken."""
    if manifest_lookup.error is not None:
        pytest.fail(manifest_lookup.error, pytrace=False)
    return manifest_lookup.manifest


@pytest.fixture(scope="session")
def manifest(optional_manifest: Manifest | None, manifest_lookup: ManifestLookup) -> Manifest:
    """The manifest; pin checks skip without one."""
    if optional_manifest is None:
        pytest.skip(manifest_lookup.skip_reason)
    return optional_manifest


@pytest.fixture(scope="session")
def fp32_policy_at_start(pytestconfig: pytest.Config) -> dict[str, object]:
    return pytestconfig.stash[FP32_POLICY_AT_START_KEY]


@pytest.fixture(scope="session")
def gemm_bench() -> GemmBench:
    """The GEMM benchmark of cuda:0, measured once per session: the throughput checks gate it, and AMP,
    conv and SDPA are bounded by what it measured in the same run."""
    import torch

    from conformance.support.workloads.gemm_bench import run_gemm_bench

    return run_gemm_bench(torch.device("cuda", 0))


@pytest.fixture
def record_metric(request: pytest.FixtureRequest) -> RecordMetric:
    """``record_metric(name, value, unit, **fields)``: a measurement for the JSON report.

    A dotted name (``gemm.fp16.tflops``) is a stable name, also listed in ``measurements``.
    Fields: min, median, max, samples, peak, bound, bound_kind, device, clocks, contradicts.
    """
    recorder = request.config.stash[RECORDER_KEY]
    node = request.node

    def record(name: str, value: float | str, unit: str, **fields: object) -> None:
        recorder.record_metric(node.nodeid, name, value, unit, **fields)
        shown = value if isinstance(value, str) else f"{float(value):.6g}"
        node.user_properties.append((f"metric.{name}", f"{shown} {unit}"))

    return record


@pytest.fixture
def record_dtype(request: pytest.FixtureRequest) -> RecordDtype:
    """``record_dtype(dtype, verdict, reason, device_index)``: native / emulated / unsupported, per dtype."""
    recorder = request.config.stash[RECORDER_KEY]
    return recorder.record_dtype


@pytest.fixture
def record_note(request: pytest.FixtureRequest) -> RecordNote:
    """``record_note(text)``: a remark (warning-level finding) for the JSON report."""
    recorder = request.config.stash[RECORDER_KEY]
    node = request.node

    def record(text: str) -> None:
        recorder.record_note(node.nodeid, text)
        node.user_properties.append(("note", text))

    return record


@pytest.fixture
def cuda_device(record_metric: RecordMetric) -> Iterator[torch.device]:
    """cuda:0; records the test's peak allocated GPU memory and frees the cache afterwards."""
    import torch

    device = torch.device("cuda", 0)
    torch.empty(1, device=device)  # initialises the caching allocator before its stats are reset
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    yield device
    torch.cuda.synchronize(device)
    record_metric("peak_gpu_memory_allocated", torch.cuda.max_memory_allocated(device) / 2**20, "MiB")
    torch.cuda.empty_cache()
