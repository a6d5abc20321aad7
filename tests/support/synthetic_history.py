"""Synthetic nightly histories for the decay model: a real H100 run copied night by night, with chosen metrics
scaled, another host, another image digest of the same variant, or an injected fault."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pytorch_cuda.run_store import Stored, ingest, read_store
from tests.support.recorded_runs import H100_FLEET

BASE: Final[dict[str, Any]] = json.loads(H100_FLEET.read_text(encoding="utf-8"))


def night(
    day: int,
    *,
    scale: Mapping[str, float] | None = None,
    host: str = "runner-a",
    variant: str | None = "cu12",
) -> dict[str, Any]:
    """The base run on day ``day`` (2026-11-01 + day, 03:00 UTC), each metric in ``scale`` multiplied, on ``host``,
    as a nightly of ``variant`` (a new digest each night) or a bare host (None)."""
    document = copy.deepcopy(BASE)
    document["started_at"] = (
        f"2026-11-{1 + day:02d}T03:00:00+00:00" if day < 30 else f"2026-12-{day - 29:02d}T03:00:00+00:00"
    )
    for name, factor in (scale or {}).items():
        metric = document["measurements"][name]
        for field in ("value", "median", "min", "max"):
            if isinstance(metric.get(field), int | float):
                metric[field] *= factor
    document["environment"]["host"] = {"sha256": hashlib.sha256(host.encode()).hexdigest()[:16], "source": "hostname"}
    document["environment"]["gpus"][0]["uuid"] = f"GPU-{host}"
    if variant is not None:
        digest = "sha256:" + hashlib.sha256(f"{variant}-{day}".encode()).hexdigest()
        document["image"] = {"digest": digest, "revision": None, "ref": f"ghcr.io/o/pytorch-cuda@{digest}"}
        document["manifest"] = {"path": "/etc/pytorch-cuda/manifest.json", "origin": "default", "found": True,
                                "error": None, "content": {"target": variant, "flavour": "runtime"}}  # fmt: skip
    return document


def write_nights(folder: Path, nights: list[dict[str, Any]]) -> list[Path]:
    """Each night's results file in `folder` (night-000.json, ...), oldest first: what an ingest reads."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, document in enumerate(nights):
        path = folder / f"night-{i:03d}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        paths.append(path)
    return paths


def store_nights(store: Path, nights: list[dict[str, Any]], *, fault: str | None = None) -> list[Stored]:
    """Write each night's results file beside the store and ingest them (under ``fault`` if given)."""
    folder = store.parent / "incoming"
    folder.mkdir(exist_ok=True)
    paths = []
    for document in nights:
        path = folder / f"{document['started_at'][:10]}-{len(list(folder.iterdir()))}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        paths.append(path)
    ingest(paths, store, fault=fault)
    return read_store(store)


def wobble(day: int) -> float:
    """A deterministic +-1% night-to-night wobble."""
    return 1.0 + ((day * 7919) % 21 - 10) / 1000
