"""The OLD run of `report --diff [OLD] NEW --baseline-store DIR` of a like-for-like diff, from a results store
(docs/site.md): the latest released run of NEW's image variant on NEW's GPU class, a nightly run (no fault,
control or partial selection), never NEW itself (the same results file stored, or a run of NEW's own image
digest); else the OLD given (the diff says loudly how the two differ); else exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from pytorch_cuda.errors import UserError
from pytorch_cuda.precision_report.diff_baseline import gpu_class, pick_baseline, variant_of
from pytorch_cuda.precision_report.report_files import load_pair
from pytorch_cuda_contract.results_file import ConformanceResults


def diff_pair(paths: list[Path], store: Path | None) -> tuple[ConformanceResults, ConformanceResults, str]:
    """(old, new, a line saying where old came from)."""
    if store is None:
        if len(paths) != 2:
            raise UserError(
                cause=f"report --diff compares two result files, OLD then NEW; {len(paths)} were given",
                fix="pass the last release's results.json, then the candidate's (or NEW alone with --baseline-store)",
            )
        old, new = load_pair(*paths)
        return old, new, f"baseline: {paths[0]}"
    if len(paths) not in (1, 2):
        raise UserError(
            cause=f"report --diff --baseline-store takes NEW, or a fallback OLD then NEW; {len(paths)} were given",
            fix="pass the candidate's results.json (and, optionally before it, the results to fall back to)",
        )
    from pytorch_cuda.run_store import read_store

    fallback: ConformanceResults | None = None
    if len(paths) == 2:
        fallback, new = load_pair(paths[0], paths[1])
    else:
        new = load_pair(paths[0], paths[0])[1]
    from pytorch_cuda.run_store.record import results_sha256

    own = results_sha256(json.loads(paths[-1].read_bytes()))  # NEW stored already: never its own baseline
    released = [
        r.results for r in read_store(store) if r.purpose == "nightly" and not r.partial and r.record.sha256 != own
    ]  # a nightly with a failed check or tests not run is judged, never a baseline of a diff
    picked = pick_baseline(new, released)
    wanted = f"{variant_of(new)} on {gpu_class(new)}"
    if picked is not None:
        where = (
            f"{store.name}/{Path(picked.source).relative_to(store)}"
            if picked.source.startswith(str(store))
            else Path(picked.source).name
        )
        return picked, new, f"baseline: the latest released run of {wanted} in the store ({where})"
    if fallback is None:
        raise UserError(
            cause=f"{store} holds no released run of {wanted} ({len(released)} runs without a fault)",
            fix="ingest the released image's results on that GPU (build.py results ingest), or pass a fallback OLD",
        )
    return fallback, new, f"baseline: no released run of {wanted} in {store}; fell back to {paths[0]}"
