"""The one reader of the suite's results JSON (schema 2). Standard library only.

Every consumer goes through here: the builder's in-image checks, the integration
tests, the in-image precision summary and the host report. A file that cannot be
read at all raises :class:`ResultsFileError`, whose message is one paragraph with the
cause and the fix. A file that reads but lacks parts (a run that stopped half way)
loads; what is absent is listed in ``ConformanceResults.missing``.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from pytorch_cuda_contract.carried_stack import CarriedStackError, RunStack, parse_run_stack
from pytorch_cuda_contract.manifest import BARE_HOST_TARGET
from pytorch_cuda_contract.results_format import FIRST_HARNESS, OUTCOMES, SUITE, SUPPORTED_SCHEMAS
from pytorch_cuda_contract.results_model import (
    ConformanceResults,
    DtypeVerdict,
    Gpu,
    ImageInfo,
    Metric,
    TestResult,
    as_float,
    as_int,
    as_str,
    listing,
    mapping,
    parse_metric,
)

__all__ = [
    "SUITE",
    "SUPPORTED_SCHEMAS",
    "ConformanceResults",
    "DtypeVerdict",
    "Gpu",
    "ImageInfo",
    "Metric",
    "ResultsFileError",
    "RunStack",
    "TestResult",
    "load_results",
    "parse_document",
    "parse_results",
]


class ResultsFileError(ValueError):
    """A results file that cannot be read: ``str(error)`` is one paragraph, cause then fix."""

    def __init__(self, source: str, cause: str, fix: str) -> None:
        self.source, self.cause, self.fix = source, cause.strip().rstrip("."), fix.strip().rstrip(".")
        super().__init__(self.paragraph())

    def paragraph(self, width: int = 100) -> str:
        text = f"error: {self.source}: {self.cause}. Fix: {self.fix}."
        return textwrap.fill(text, width=width, break_on_hyphens=False, break_long_words=False)


RERUN: Final = "run the suite again with --conformance-json PATH (inside an image: `conformance`) and pass that file"


def load_results(path: str | Path) -> ConformanceResults:
    """Read and parse one results file."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise ResultsFileError(source, "no such file", f"check the path, or {RERUN}") from None
    except IsADirectoryError:
        raise ResultsFileError(
            source, "is a directory, not a results file", "pass the results.json inside it"
        ) from None
    except OSError as error:
        raise ResultsFileError(source, f"cannot be read ({error.strerror})", "check its permissions") from None
    return parse_results(raw, source=source)


def parse_results(data: bytes | str, *, source: str = "<results>") -> ConformanceResults:
    """Parse results JSON given as bytes or text."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ResultsFileError(source, "is not UTF-8 text, so not a results JSON file", RERUN) from None
    if not data.strip():
        raise ResultsFileError(source, "is empty (the run was probably killed before it wrote anything)", RERUN)
    try:
        document = json.loads(data)
    except json.JSONDecodeError as error:
        stripped = data.strip()
        truncated = error.pos >= len(stripped) - 1 or error.msg.startswith("Unterminated string")
        what = "ends in the middle of the JSON (truncated)" if truncated else "is not valid JSON"
        raise ResultsFileError(
            source, f"{what}: {error.msg} at line {error.lineno} column {error.colno}", RERUN
        ) from None
    return parse_document(document, source=source)


def parse_document(document: object, *, source: str = "<results>") -> ConformanceResults:
    """Parse a results document already read from JSON (a store that holds it parsed once, not twice)."""
    if not isinstance(document, dict):
        raise ResultsFileError(source, f"holds a JSON {type(document).__name__}, not an object", RERUN)
    return _from_document(document, source)


def _check_header(document: Mapping[str, Any], source: str) -> int:
    suite, schema = document.get("suite"), document.get("schema")
    if suite != SUITE:
        raise ResultsFileError(
            source,
            f'is not a pytorch-cuda conformance results file ("suite" is {suite!r}, expected {SUITE!r})',
            f"pass the file written by the suite's --conformance-json option, or {RERUN}",
        )
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise ResultsFileError(source, f'has no integer "schema" (found {schema!r})', RERUN)
    if schema > max(SUPPORTED_SCHEMAS):
        raise ResultsFileError(
            source,
            f"uses results schema {schema}, newer than this reader understands "
            f"(schemas {', '.join(map(str, SUPPORTED_SCHEMAS))})",
            "update this checkout of pytorch-cuda (git pull) so its reader knows the newer schema, "
            "or produce the file with the suite version that matches this reader",
        )
    if 0 < schema < min(SUPPORTED_SCHEMAS):
        raise ResultsFileError(
            source,
            f"uses results schema {schema}, older than this reader understands "
            f"(schemas {', '.join(map(str, SUPPORTED_SCHEMAS))}; schema 1 had no measurements index)",
            RERUN,
        )
    if schema not in SUPPORTED_SCHEMAS:
        raise ResultsFileError(source, f"uses unknown results schema {schema}", RERUN)
    return schema


@dataclass
class _Gaps:
    items: list[str] = field(default_factory=list)

    def table(self, document: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        value = document.get(key)
        if isinstance(value, Mapping):
            return value
        self.items.append(f'"{key}" is absent' if value is None else f'"{key}" is not an object')
        return {}


@lru_cache(maxsize=65_536)
def _outcome_only(nodeid: str, outcome: str) -> TestResult:
    """A test entry that holds its outcome alone (the results store's judge view: the judge reads a history's runs
    so, about 90 tests each): one immutable TestResult per test and outcome, shared by every run that has it."""
    return TestResult(nodeid, outcome, None, (), None, None, MappingProxyType({}), ())


def _tests(raw: Mapping[str, Any], gaps: _Gaps) -> dict[str, TestResult]:
    tests: dict[str, TestResult] = {}
    for nodeid, entry in raw.items():
        if not isinstance(entry, Mapping):
            gaps.items.append(f"test {nodeid} is not an object")
            continue
        if len(entry) == 1 and "outcome" in entry:
            tests[str(nodeid)] = _outcome_only(str(nodeid), as_str(entry["outcome"]) or "unknown")
            continue
        metrics_raw = mapping(entry.get("metrics"))
        metrics = {name: parse_metric(name, m, nodeid) for name, m in metrics_raw.items() if isinstance(m, Mapping)}
        notes = listing(entry.get("notes"))
        markers = listing(entry.get("markers"))
        tests[str(nodeid)] = TestResult(
            nodeid=str(nodeid),
            outcome=as_str(entry.get("outcome")) or "unknown",
            phase=as_str(entry.get("phase")),
            markers=tuple(str(m) for m in markers),
            duration_s=as_float(entry.get("duration_s")),
            message=as_str(entry.get("message")),
            metrics=metrics,
            notes=tuple(str(n) for n in notes),
            informational=as_str(entry.get("informational")),
        )
    return tests


def _gpus(environment: Mapping[str, Any]) -> tuple[Gpu, ...]:
    raw = environment.get("gpus")
    gpus: list[Gpu] = []
    for position, entry in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(entry, Mapping):
            continue
        gpus.append(
            Gpu(
                index=_or(as_int(entry.get("index")), position),
                name=as_str(entry.get("name")) or "unknown GPU",
                compute_capability=as_str(entry.get("compute_capability")),
                memory_bytes=as_int(entry.get("memory_bytes")),
                sm_count=as_int(entry.get("sm_count")),
                driver=as_str(entry.get("driver")) or as_str(environment.get("driver")),
                cuda_driver_version=as_str(entry.get("cuda_driver_version")),
                uuid=as_str(entry.get("uuid")),
            )
        )
    return tuple(gpus)


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _from_document(document: Mapping[str, Any], source: str) -> ConformanceResults:
    schema = _check_header(document, source)
    gaps = _Gaps()
    environment = gaps.table(document, "environment")
    if "error" in environment:
        gaps.items.append(f"environment could not be collected: {environment['error']}")
    tests = _tests(gaps.table(document, "tests"), gaps)
    totals_raw = gaps.table(document, "totals")
    totals = {str(k): v for k, v in totals_raw.items() if isinstance(v, int)}
    if totals_raw:  # an outcome newer than the file (not_judged) counts 0 there
        totals = {**dict.fromkeys(OUTCOMES, 0), **totals}
    manifest = mapping(document.get("manifest"))
    stack = _stack(document, manifest, gaps)
    harness = _harness(document, gaps)
    measurements: dict[str, Metric] = {}
    dtypes: dict[str, DtypeVerdict] = {}
    for name, m in gaps.table(document, "measurements").items():
        if isinstance(m, Mapping):
            measurements[name] = parse_metric(name, m, as_str(m.get("test")))
    for dtype, v in mapping(document.get("dtypes")).items():
        if isinstance(v, Mapping):
            dtypes[dtype] = DtypeVerdict(
                dtype, as_str(v.get("verdict")) or "unknown", as_str(v.get("reason")), as_int(v.get("device_index"))
            )
    img = mapping(document.get("image"))
    image = ImageInfo(as_str(img.get("digest")), as_str(img.get("revision")), as_str(img.get("ref")))
    argv = document.get("argv")
    return ConformanceResults(
        source=source,
        schema=schema,
        started_at=as_str(document.get("started_at")),
        wall_time_s=as_float(document.get("wall_time_s")),
        argv=tuple(str(a) for a in argv) if isinstance(argv, list) else (),
        markexpr=as_str(document.get("markexpr")),
        exit_status=as_int(document.get("exit_status")),
        environment=environment,
        gpus=_gpus(environment),
        manifest=manifest,
        image=image,
        suite_digest=as_str(document.get("suite_digest")),
        totals=totals,
        tests=tests,
        measurements=measurements,
        dtypes=dtypes,
        missing=tuple(gaps.items),
        stack=stack,
        harness=harness,
    )


def _harness(document: Mapping[str, Any], gaps: _Gaps) -> int:
    """The timing harness of the run ("harness"); a file written before the field was measured by the first."""
    raw = document.get("harness")
    if raw is None:
        return FIRST_HARNESS
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < FIRST_HARNESS:
        gaps.items.append(f'"harness" is not a harness version (found {raw!r})')
        return FIRST_HARNESS
    return raw


def _stack(document: Mapping[str, Any], manifest: Mapping[str, Any], gaps: _Gaps) -> RunStack:
    """The run's "stack". A file written before runs named theirs ran either inside an image (its manifest found,
    an image's) or on a bare host (no manifest, or a bare host's expectations file): no such file ran on a carried
    stack, which came with the "stack" object."""
    raw = document.get("stack")
    if isinstance(raw, Mapping):
        try:
            return parse_run_stack(raw)
        except CarriedStackError as exc:
            gaps.items.append(f'"stack" cannot be read: {exc}')
            return RunStack("host", recorded=False, error=str(exc))
    if raw is not None:
        gaps.items.append('"stack" is not an object')
    content = manifest.get("content")
    image = manifest.get("found") is True and isinstance(content, Mapping) and content.get("target") != BARE_HOST_TARGET
    return RunStack("image" if image else "host", recorded=False)
