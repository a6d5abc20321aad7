"""What `build.py results judge` prints: per history, its runs by purpose, the findings that are not cleared, what
the latest nightly run carries (the regressions open on it, or "no history yet (k of N runs)"), and (asked for)
the noise learned with each metric's minimum detectable regression; the same as JSON."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from pytorch_cuda.decay.finding import DecayFinding
from pytorch_cuda.decay.judge import Judged


def _finding_json(finding: DecayFinding) -> dict[str, Any]:
    def number(x: float) -> float | None:
        return x if math.isfinite(x) else None

    return {
        "metric": finding.metric,
        "kind": finding.kind,
        "status": finding.status,
        "run": finding.run.record.sha256,
        "started_at": finding.run.results.started_at,
        "partial": finding.run.partial,
        "under": finding.run.record.fault or finding.run.record.control,
        "value": number(finding.value),
        "centre": finding.noise.centre,
        "change": number(finding.change),
        "limit": finding.limit,
        "since": finding.since,
        "runs": [r.record.sha256 for r in finding.evidence],
        "hosts": list(finding.machines),
    }


def _counts(j: Judged) -> dict[str, int]:
    counts = Counter(r.purpose for r in j.runs)
    partial = sum(1 for r in j.nightly if r.partial)
    return {**dict(sorted(counts.items())), **({"partial nightly": partial} if partial else {})}


def judged_document(histories: Sequence[Judged]) -> dict[str, Any]:
    return {
        "kind": "pytorch-cuda-history-judgement",
        "schema": 2,
        "histories": [
            {
                "key": asdict(j.key),
                "runs": _counts(j),
                "no_history": j.no_history,
                "harness": j.harness,
                "earlier_harness_runs": j.earlier_harness,
                "latest_confirmed": [_finding_json(f) for f in j.latest_regressions()],
                "findings": [_finding_json(f) for f in j.findings],
                "noise": [{**asdict(n), "detectable": n.detectable} for n in j.noise],
                "accepted": [asdict(a) for a in j.accepted],
            }
            for j in histories
        ],
    }


def _latest_line(j: Judged) -> str:
    if not j.nightly:
        return "  no nightly run"
    if j.no_history:
        return f"  latest nightly run: {j.no_history}: nothing is judged until then"
    latest = j.latest_regressions()
    partial = " (partial: judged on the numbers it has)" if j.nightly[-1].partial else ""
    return f"  latest nightly run{partial}: {len(latest)} open regression(s)"


def judged_lines(histories: Sequence[Judged], *, noise: bool) -> list[str]:
    lines: list[str] = []
    for j in histories:
        lines.append(f"{j.key.text}: " + ", ".join(f"{n} {purpose}" for purpose, n in _counts(j).items()))
        if j.earlier_harness:
            lines.append(
                f"  timing harness {j.harness}: judged against its own {len(j.current)} nightly run(s); the "
                f"{j.earlier_harness} run(s) of an earlier harness are kept, not compared"
            )
        if noise:
            lines += [
                f"  noise {n.metric}: {n.describe()}; detects a held regression of {n.detectable:.1%}" for n in j.noise
            ]
        for f in j.findings:
            if f.status == "cleared":
                continue
            under = f.run.record.fault or f.run.record.control
            when = (f.run.results.started_at or "?")[:16]
            mark = f"[{f.status}: {under}] " if under else ("[partial] " if f.run.partial else "")
            lines.append(f"  {when} {mark}{f.describe()}")
        lines += [f"  accepted {a.metric} through {a.through[:12]} ({a.accepted_at}): {a.reason}" for a in j.accepted]
        lines.append(_latest_line(j))
    return lines
