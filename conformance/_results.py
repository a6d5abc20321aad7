"""The ``--conformance-json`` result file: a pytest plugin and the metric fixture API.

Schema (``"schema": 1``) is documented in conformance/README.md.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Protocol

import pytest

from conformance._manifest import ManifestLookup

RESULTS_SCHEMA: Final = 1
MODE_MARKERS: Final = ("cpu", "gpu", "multigpu")
MESSAGE_LIMIT: Final = 4000


class RecordMetric(Protocol):
    def __call__(self, name: str, value: float, unit: str) -> None: ...


class RecordNote(Protocol):
    def __call__(self, text: str) -> None: ...


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

    def as_json(self) -> dict[str, object]:
        return {
            "outcome": self.outcome or "unknown",
            "phase": self.phase,
            "markers": self.markers,
            "duration_s": round(self.duration_s, 4),
            "message": self.message,
            "metrics": self.metrics,
            "notes": self.notes,
        }


def _report_message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple):
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    text = str(getattr(crash, "message", None) or longrepr).removeprefix("Failed: ")
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


def _collect_message(report: pytest.CollectReport) -> str:
    text = str(report.longrepr)
    lines = [line for line in text.splitlines() if line.startswith("E ")] or text.splitlines()[-5:]
    message = "collection failed: " + " | ".join(line.removeprefix("E").strip() for line in lines)
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 3] + "..."


def _json_number(value: float) -> float | str:
    if math.isfinite(value):
        return float(value)
    return str(value)  # "nan" / "inf" stay visible instead of breaking JSON


class ResultsRecorder:
    """Collects outcomes, durations, metrics and notes; writes the JSON file."""

    def __init__(self, json_path: Path | None, manifest: ManifestLookup, distributed_env: dict[str, str]) -> None:
        self.json_path = json_path
        self.manifest = manifest
        self.distributed_env = distributed_env
        self.records: dict[str, TestRecord] = {}
        self.started_wall = datetime.now(UTC)
        self.started = time.monotonic()
        self.markexpr = ""

    def _record(self, nodeid: str) -> TestRecord:
        if nodeid not in self.records:
            self.records[nodeid] = TestRecord(nodeid=nodeid, markers=[])
        return self.records[nodeid]

    def record_metric(self, nodeid: str, name: str, value: float, unit: str) -> None:
        self._record(nodeid).metrics[name] = {"value": _json_number(value), "unit": unit}

    def record_note(self, nodeid: str, text: str) -> None:
        self._record(nodeid).notes.append(text)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        self.markexpr = str(config.getoption("markexpr", "") or "")
        for item in items:
            record = self._record(item.nodeid)
            record.markers = [m for m in MODE_MARKERS if item.get_closest_marker(m) is not None]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = self._record(report.nodeid)
        record.duration_s += report.duration
        if report.failed:
            if record.outcome != "failed":
                record.outcome, record.phase, record.message = "failed", report.when, _report_message(report)
        elif report.skipped:
            if record.outcome is None:
                record.outcome, record.phase, record.message = "skipped", report.when, _report_message(report)
        elif report.when == "call" and record.outcome is None:
            record.outcome = "passed"

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A module that cannot even be imported (e.g. ``import torch`` fails) counts as a failed test."""
        if report.failed:
            record = self._record(report.nodeid)
            record.outcome, record.phase = "failed", "collect"
            record.message = _collect_message(report)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        for item in items:
            self.records.pop(item.nodeid, None)

    def totals(self) -> dict[str, int]:
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        for record in self.records.values():
            if record.outcome in counts:
                counts[record.outcome] += 1
        counts["total"] = sum(counts.values())
        return counts

    def document(self, exitstatus: int) -> dict[str, object]:
        try:
            from conformance._inventory import collect_environment

            environment = collect_environment()
        except Exception as exc:
            environment = {"error": f"{type(exc).__name__}: {exc}"}
        environment["distributed_env"] = self.distributed_env
        tests = {nodeid: r.as_json() for nodeid, r in self.records.items() if r.outcome is not None}
        return {
            "schema": RESULTS_SCHEMA,
            "suite": "pytorch-cuda-conformance",
            "started_at": self.started_wall.isoformat(timespec="seconds"),
            "wall_time_s": round(time.monotonic() - self.started, 3),
            "argv": sys.argv[1:],
            "markexpr": self.markexpr,
            "exit_status": int(exitstatus),
            "environment": environment,
            "manifest": self.manifest.as_json(),
            "totals": self.totals(),
            "tests": tests,
        }

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.json_path is None:
            return
        document = self.document(exitstatus)
        self.json_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.json_path.with_name(self.json_path.name + f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        temporary.replace(self.json_path)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        measured = [(nodeid, r) for nodeid, r in self.records.items() if r.metrics or r.notes]
        if not measured:
            return
        terminalreporter.section("conformance metrics")
        for nodeid, record in measured:
            terminalreporter.write_line(nodeid)
            for name, metric in record.metrics.items():
                value = metric["value"]
                shown = f"{value:.6g}" if isinstance(value, float) else str(value)
                terminalreporter.write_line(f"    {name} = {shown} {metric['unit']}")
            for note in record.notes:
                terminalreporter.write_line(f"    note: {note}")
        if self.json_path is not None:
            terminalreporter.write_line(f"conformance JSON: {self.json_path}")
