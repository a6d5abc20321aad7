"""What `build.py results judge` prints: per history, its runs by purpose, the findings that are not cleared,
and (asked for) the noise learned; the same as JSON."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from pytorch_cuda.decay.judge import DecayFinding, Judged


def _finding_json(finding: DecayFinding) -> dict[str, Any]:
    return {
        "metric": finding.metric,
        "kind": finding.kind,
        "status": finding.status,
        "run": finding.run.record.sha256,
        "started_at": finding.run.results.started_at,
        "under": finding.run.record.fault or finding.run.record.control,
        "value": finding.value,
        "centre": finding.noise.centre,
        "change": finding.change,
        "limit": finding.limit,
        "runs": [r.record.sha256 for r in finding.evidence],
        "hosts": list(finding.machines),
    }


def judged_document(histories: Sequence[Judged]) -> dict[str, Any]:
    return {
        "kind": "pytorch-cuda-history-judgement",
        "schema": 1,
        "histories": [
            {
                "key": asdict(j.key),
                "runs": dict(Counter(r.purpose for r in j.runs)),
                "latest_confirmed": [_finding_json(f) for f in j.latest_regressions()],
                "findings": [_finding_json(f) for f in j.findings],
                "noise": [asdict(n) for n in j.noise],
            }
            for j in histories
        ],
    }


def judged_lines(histories: Sequence[Judged], *, noise: bool) -> list[str]:
    lines: list[str] = []
    for j in histories:
        counts = ", ".join(f"{n} {purpose}" for purpose, n in sorted(Counter(r.purpose for r in j.runs).items()))
        lines.append(f"{j.key.text}: {counts}")
        if noise:
            lines += [f"  noise {n.metric}: {n.describe()}" for n in j.noise]
        for f in j.findings:
            if f.status == "cleared":
                continue
            under = f.run.record.fault or f.run.record.control
            when = (f.run.results.started_at or "?")[:16]
            lines.append(f"  {when} {f'[{f.status}: {under}] ' if under else ''}{f.describe()}")
        latest = j.latest_regressions()
        lines.append(
            f"  latest nightly run: {len(latest)} confirmed regression(s)" if j.nightly else "  no nightly run"
        )
    return lines
