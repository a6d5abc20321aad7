"""Accepted regressions: a confirmed regression a team has looked at and accepted (`build.py results accept`),
stored beside the runs as one immutable file each, accepted/<sha256>.json, and exported with them in index.json.

An acceptance names the history (its key's text), the metric, the run it was accepted through (the latest run of
the history that carried it) and the reason; the decay model makes that run's level the new centre of the metric.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

from pytorch_cuda.run_store.record import StoreError, canonical_bytes

ACCEPTED_KIND: Final = "pytorch-cuda-accepted-regression"


@dataclass(frozen=True)
class Accepted:
    history: str  # HistoryKey.text
    metric: str
    through: str  # the sha256 of the run it was accepted through
    reason: str
    accepted_at: str  # ISO 8601, UTC

    def document(self) -> dict[str, str]:
        return {"kind": ACCEPTED_KIND, **asdict(self)}

    @property
    def sha256(self) -> str:
        return hashlib.sha256(canonical_bytes(self.document())).hexdigest()


def read_accepted(store: Path) -> list[Accepted]:
    """Every accepted regression of the store, oldest first."""
    found = []
    for path in sorted((store / "accepted").glob("*.json")):
        fix = "restore it from the results branch's history (git log -- PATH), or remove it and accept again"
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            accepted = Accepted(**{k: str(doc[k]) for k in ("history", "metric", "through", "reason", "accepted_at")})
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise StoreError(f"accepted regression {path} cannot be read ({error})", fix) from None
        if doc.get("kind") != ACCEPTED_KIND or path.stem != accepted.sha256:
            raise StoreError(f"{path} is not an accepted regression, or was changed since it was written", fix)
        found.append(accepted)
    return sorted(found, key=lambda a: (a.accepted_at, a.sha256))


def accepted_path(store: Path, accepted: Accepted) -> Path:
    return store / "accepted" / f"{accepted.sha256}.json"
