"""`build.py results accept`: accept a regression that is open on a history's latest nightly run, with a reason.
The acceptance is stored with the runs (run_store.accepted); from that run on, the decay model judges the metric
against its accepted level."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pytorch_cuda.decay.judge import Judged, judge_store
from pytorch_cuda.run_store import StoreError
from pytorch_cuda.run_store.accepted import Accepted
from pytorch_cuda.run_store.backend import StoreLocation, open_store


def _history(judged: list[Judged], history: str | None) -> list[Judged]:
    if history is None:
        return judged
    return [j for j in judged if history in (j.key.text, j.key.slug) or history.lower() in j.key.gpu.lower()]


def accept_open(store: StoreLocation, metric: str, reason: str, history: str | None = None) -> tuple[Accepted, ...]:
    """Accept ``metric``'s open regression in each history (matching ``history``: its text, slug or a part of
    its GPU name) whose latest nightly run carries one; refused when none does, or without a reason."""
    if not reason.strip():
        raise StoreError(
            f"results accept {metric} was given no reason",
            'say why the new level is right: --reason "cuBLAS 13.1 picks a slower kernel for this shape; see #123"',
        )
    backend = open_store(store)
    judged = _history(judge_store(backend.runs(), backend.accepted()), history)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    accepted = []
    for j in judged:
        for finding in j.latest_regressions():
            if finding.metric == metric:
                accepted.append(Accepted(j.key.text, metric, finding.run.record.sha256, reason.strip(), now))
    if not accepted:
        named = store.name if isinstance(store, Path) else store
        open_now = sorted({f"{f.metric} ({j.key.text})" for j in judged for f in j.latest_regressions()})
        raise StoreError(
            f"no regression of {metric} is open on the latest nightly run of "
            f"{history or 'any history'} in {named}; open now: {', '.join(open_now) or 'none'}",
            "name a metric (and --history) from `build.py results judge`, which lists the open regressions",
        )
    for a in accepted:
        backend.add_accepted(a)
    return tuple(accepted)
