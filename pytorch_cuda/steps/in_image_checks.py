"""Checks that run inside a candidate image before any tag moves: the conformance suite's CPU part."""

from __future__ import annotations

from dataclasses import dataclass

from pytorch_cuda.engine.protocol import Engine, RunRequest
from pytorch_cuda.steps.inductor_cache import InductorCache
from pytorch_cuda_contract import paths
from pytorch_cuda_contract.results_file import ConformanceResults, ResultsFileError, parse_results

RESULTS_PATH = paths.RESULTS_PATH
JUNIT_PATH = paths.JUNIT_PATH
CHECK_SHM_SIZE = "2g"
CHECK_COMMAND = ("conformance", "-m", "cpu", "-q", "-rfEs", "-p", "no:randomly")


@dataclass(frozen=True)
class CheckReport:
    passed: bool
    exit_code: int
    counts: dict[str, int]
    failures: tuple[str, ...]
    output_tail: str
    results: ConformanceResults | None
    reused: bool = False  # remembered from an earlier passing run on the same image ID and suite


def run_cpu_conformance(
    engine: Engine, ref: str, cache: InductorCache | None = None, timeout_s: float = 1800.0
) -> CheckReport:
    """Run `conformance -m cpu` in the image (no GPU needed) and read its JSON result file back.

    With a cache, Inductor keeps its ISA probe programs and compiled kernels in that host volume.
    """
    result = engine.run(
        RunRequest(
            ref,
            tuple(CHECK_COMMAND),
            CHECK_SHM_SIZE,
            timeout_s,
            collect=(RESULTS_PATH, JUNIT_PATH),
            volumes={cache.volume: cache.mount_point} if cache else {},
            environment=cache.environment if cache else {},
        )
    )
    results, unreadable = _read(result.files.get(RESULTS_PATH))
    counts = results.counts() if results else {}
    failures = (results.failures() if results else ()) + unreadable
    tail = "\n".join(result.output.strip().splitlines()[-25:])
    passed = result.exit_code == 0 and not result.timed_out and results is not None and counts.get("passed", 0) > 0
    return CheckReport(passed, result.exit_code, counts, failures, tail, results)


def _read(raw: bytes | None) -> tuple[ConformanceResults | None, tuple[str, ...]]:
    """The image's results file through the one reader; an unreadable file becomes a failure line."""
    if not raw:
        return None, ()
    try:
        return parse_results(raw, source=RESULTS_PATH), ()
    except ResultsFileError as error:
        return None, (f"{error.source}: {error.cause}",)
