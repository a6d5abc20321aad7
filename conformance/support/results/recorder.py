"""The ``--conformance-json`` result file (schema 2): a pytest plugin.

The schema is documented in conformance/README.md and in results.schema.json.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import pytest

from conformance.support.results.identity import host_identity, image_identity, suite_digest
from conformance.support.results.not_judged import is_not_judged
from pytorch_cuda_contract.carried_stack import RunStack
from pytorch_cuda_contract.manifest import ManifestLookup
from pytorch_cuda_contract.metrics import RecordDtype, RecordMetric, RecordNote, build_metric, is_stable_name
from pytorch_cuda_contract.results_format import HARNESS_VERSION, OUTCOMES, RESULTS_SCHEMA, SUITE, VERDICTS

__all__ = ["RESULTS_SCHEMA", "RecordDtype", "RecordMetric", "RecordNote", "ResultsRecorder"]

MODE_MARKERS: Final = ("cpu", "gpu", "multigpu")
MESSAGE_LIMIT: Final = 4000


@dataclass
class TestRecord:
    nodeid: str
    markers: list[str]
    outcome: str | None = None
    phase: str | None = None
    message: str | None = None
    duration_s: float = 0.0
    metrics: dict[str, dict[str, object]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    informational: str | None = None  # the reason, for a check marked @pytest.mark.informational

    def as_json(self) -> dict[str, object]:
        informational = {} if self.informational is None else {"informational": self.informational}
        return {
            "outcome": self.outcome or "unknown",
            "phase": self.phase,
            "markers": self.markers,
            "duration_s": round(self.duration_s, 4),
            "message": self.message,
            "metrics": self.metrics,
            "notes": self.notes,
            **informational,
        }


def _clip(text: str) -> str:
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


def _report_message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple):
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    return _clip(str(getattr(crash, "message", None) or longrepr).removeprefix("Failed: "))


def _collect_message(report: pytest.CollectReport) -> str:
    text = str(report.longrepr)
    lines = [line for line in text.splitlines() if line.startswith("E ")] or text.splitlines()[-5:]
    return _clip("collection failed: " + " | ".join(line.removeprefix("E").strip() for line in lines))


class ResultsRecorder:
    """Collects outcomes, durations, metrics, notes and dtype verdicts; writes the JSON file."""

    def __init__(
        self,
        json_path: Path | None,
        manifest: ManifestLookup,
        distributed_env: dict[str, str],
        stack: RunStack | None = None,
    ) -> None:
        self.json_path = json_path
        self.manifest = manifest
        self.stack = stack if stack is not None else RunStack("host")
        self.distributed_env = distributed_env
        self.records: dict[str, TestRecord] = {}
        self.measurements: dict[str, dict[str, object]] = {}
        self.dtypes: dict[str, dict[str, object]] = {}
        self.started_wall = datetime.now(UTC)
        self.started = time.monotonic()
        self.markexpr = ""

    def _record(self, nodeid: str) -> TestRecord:
        if nodeid not in self.records:
            self.records[nodeid] = TestRecord(nodeid=nodeid, markers=[])
        return self.records[nodeid]

    def record_metric(self, nodeid: str, name: str, value: float | str, unit: str, **fields: object) -> None:
        metric = build_metric(value, unit, dict(fields))
        self._record(nodeid).metrics[name] = metric
        if is_stable_name(name):
            self.measurements[name] = {**metric, "test": nodeid}

    def record_note(self, nodeid: str, text: str) -> None:
        self._record(nodeid).notes.append(text)

    def record_dtype(self, dtype: str, verdict: str, reason: str, device_index: int = 0) -> None:
        if verdict not in VERDICTS:
            raise ValueError(f"dtype verdict must be one of {VERDICTS}, not {verdict!r}")
        self.dtypes[dtype] = {"verdict": verdict, "reason": reason, "device_index": device_index}

    @staticmethod
    def _markers(item: pytest.Item) -> list[str]:
        return [m for m in MODE_MARKERS if item.get_closest_marker(m) is not None]

    @staticmethod
    def _informational(item: pytest.Item) -> str | None:
        marker = item.get_closest_marker("informational")
        if marker is None:
            return None
        reason = marker.args[0] if marker.args else marker.kwargs.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.informational needs the reason as a string")
        return reason

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        self.markexpr = str(config.getoption("markexpr", "") or "")
        for item in items:
            record = self._record(item.nodeid)
            record.markers = self._markers(item)
            record.informational = self._informational(item)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        """Deselected tests stay in the report as "not_run" (unlike "skipped": not applicable here)."""
        for item in items:
            record = self._record(item.nodeid)
            record.markers = self._markers(item)
            record.informational = self._informational(item)
            record.outcome, record.phase, record.message = "not_run", None, "deselected (-m / -k)"

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = self._record(report.nodeid)
        record.duration_s += report.duration
        if report.failed:
            if record.outcome != "failed":
                record.outcome, record.phase, record.message = "failed", report.when, _report_message(report)
        elif report.skipped:
            if record.outcome is None:
                record.outcome, record.phase, record.message = self._skip(report)
        elif report.when == "call" and record.outcome is None:
            record.outcome = "passed"

    def _skip(self, report: pytest.TestReport) -> tuple[str, str, str]:
        """A skip's outcome: "not_judged" for a not-judged skip on a carried stack, a failure for one anywhere else
        (inside an image and on a bare host every check judges), else "skipped"."""
        message = _report_message(report)
        if not is_not_judged(message):
            return "skipped", report.when, message
        if self.stack.kind == "carried":
            return "not_judged", report.when, message
        return (
            "failed",
            report.when,
            _clip(
                f"{message} -- but this run is on the {self.stack.kind} stack, where every check judges: only a run "
                "on the shipped stack carried to a bare host (its venv holds the carried-stack marker) may leave a "
                "check not judged; fix the check to judge here"
            ),
        )

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A module that cannot even be imported (e.g. ``import torch`` fails) counts as a failed test."""
        if report.failed:
            record = self._record(report.nodeid)
            record.outcome, record.phase = "failed", "collect"
            record.message = _collect_message(report)

    def fail_internal(self, name: str, message: str) -> None:
        """A named failing pseudo-test for a fault found outside any test (e.g. in pytest_configure)."""
        record = self._record(name)
        record.outcome, record.phase, record.message = "failed", "setup", _clip(message)

    def totals(self) -> dict[str, int]:
        counts = dict.fromkeys(OUTCOMES, 0)
        for record in self.records.values():
            if record.outcome in counts:
                counts[record.outcome] += 1
        counts["total"] = sum(counts.values())
        return counts

    def document(self, exitstatus: int) -> dict[str, object]:
        try:
            from conformance.support.probes.inventory import collect_environment

            environment = collect_environment()
        except Exception as exc:
            environment = {"error": f"{type(exc).__name__}: {exc}"}
        environment["distributed_env"] = self.distributed_env
        environment["host"] = host_identity()
        tests = {nodeid: r.as_json() for nodeid, r in self.records.items() if r.outcome is not None}
        document: dict[str, object] = {
            "schema": RESULTS_SCHEMA,
            "suite": SUITE,
            "suite_digest": suite_digest(),
            "harness": HARNESS_VERSION,
            "image": image_identity(self.manifest),
            "started_at": self.started_wall.isoformat(timespec="seconds"),
            "wall_time_s": round(time.monotonic() - self.started, 3),
            "argv": sys.argv[1:],
            "markexpr": self.markexpr,
            "exit_status": int(exitstatus),
            "environment": environment,
            "stack": self.stack.as_json(),
            "manifest": self.manifest.as_json(),
            "totals": self.totals(),
            "tests": tests,
            "measurements": self.measurements,
        }
        if self.dtypes:
            document["dtypes"] = self.dtypes
        return document

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if any(r.outcome == "failed" for r in self.records.values()) and int(exitstatus) == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a pseudo-test failure must fail the run
            exitstatus = int(pytest.ExitCode.TESTS_FAILED)
        if self.json_path is None:
            return
        document = self.document(exitstatus)
        try:
            self.json_path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.json_path.with_name(self.json_path.name + f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n", encoding="utf-8")
            temporary.replace(self.json_path)
        except OSError as exc:
            sys.stderr.write(f"conformance: cannot write the results to {self.json_path}: {exc}\n")
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        self._summarise_metrics(terminalreporter)
        self._summarise_not_judged(terminalreporter)

    def _summarise_metrics(self, terminalreporter: pytest.TerminalReporter) -> None:
        measured = [
            (nodeid, r)
            for nodeid, r in self.records.items()
            if r.metrics or r.notes or (r.outcome, r.phase) == ("failed", "setup")
        ]
        if not measured:
            return
        terminalreporter.section("conformance metrics")
        for nodeid, record in measured:
            terminalreporter.write_line(nodeid + (f"  FAILED: {record.message}" if record.outcome == "failed" else ""))
            for name, metric in record.metrics.items():
                value = metric["value"]
                shown = f"{value:.6g}" if isinstance(value, float) else str(value)
                terminalreporter.write_line(f"    {name} = {shown} {metric['unit']}")
            for note in record.notes:
                terminalreporter.write_line(f"    note: {note}")
        if self.json_path is not None:
            terminalreporter.write_line(f"conformance JSON: {self.json_path}")

    def _summarise_not_judged(self, terminalreporter: pytest.TerminalReporter) -> None:
        """pytest counts them as skipped: say which, and why, so none is skipped silently."""
        not_judged = [(nodeid, r) for nodeid, r in self.records.items() if r.outcome == "not_judged"]
        if not not_judged:
            return
        terminalreporter.section(f"not judged on a bare host ({len(not_judged)}, counted apart from passed)")
        for nodeid, record in not_judged:
            terminalreporter.write_line(f"{nodeid}: {record.message}")
