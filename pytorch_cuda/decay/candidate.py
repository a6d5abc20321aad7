"""`report --diff NEW --baseline-store DIR`: NEW judged by the same model as `results judge`, as if it were the next
nightly run of its history (the store is copied, never written), so the diff and the nightly give one verdict."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.decay.finding import DecayFinding
from pytorch_cuda.decay.judge import judge_store
from pytorch_cuda.run_store import ingest
from pytorch_cuda.run_store.backend import StoreLocation, is_database, open_store
from pytorch_cuda.run_store.export import export_store
from pytorch_cuda.run_store.record import results_sha256


@dataclass(frozen=True)
class CandidateVerdict:
    history: str  # the history's key, as text
    no_history: str | None  # "no history yet (k of N runs)": nothing judged
    findings: tuple[DecayFinding, ...]  # on NEW: steps, drifts, missing metrics, and what stays open

    @property
    def regressions(self) -> tuple[DecayFinding, ...]:
        return tuple(f for f in self.findings if f.status == "confirmed")

    def lines(self) -> list[str]:
        """Markdown: the verdict, no machine path."""
        head = f"**The history's verdict** ({self.history}, the model of `build.py results judge`): "
        if self.no_history:
            return [head + f"{self.no_history}: not judged.", ""]
        shown = [f for f in self.findings if f.status in ("confirmed", "suspect")]
        lines = [head + f"{len(self.regressions)} regression(s), {len(shown) - len(self.regressions)} suspect."]
        lines += [f"- `{f.metric}`: {f.describe()}" for f in shown]
        return [*lines, ""]


def judge_candidate(store: StoreLocation, new: Path) -> CandidateVerdict:
    """``new`` judged as the next nightly of its history in ``store`` (a copy; NEW already stored is judged where
    it stands)."""
    own = results_sha256(json.loads(new.read_bytes()))
    with tempfile.TemporaryDirectory(prefix="candidate-") as tmp:
        if is_database(store):
            copy = Path(tmp) / "store.sqlite"
            export_store(store, copy)
        else:
            copy = Path(tmp) / "store"
            shutil.copytree(store, copy)
        ingest([new], copy, skip_duplicates=True)
        backend = open_store(copy)
        runs = backend.runs()
        candidate = next(r for r in runs if r.record.sha256 == own)
        history = [r for r in runs if r.key == candidate.key and r is not candidate and r.purpose == "nightly"]
        (judged,) = judge_store([*history, candidate], backend.accepted())
        latest = judged.nightly[-1] if judged.nightly else None
        findings = judged.on(candidate)
        no_history = judged.no_history if latest is candidate else None
        return CandidateVerdict(judged.key.text, no_history, findings)
