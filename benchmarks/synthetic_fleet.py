"""A synthetic fleet's year of nightly runs for benchmarks/store_scale.py: every run is a real H100 run (evidence/)
copied for one GPU model x variant x night, every watched number scaled by its own seeded noise (1% normal, 2% for
conv, SDPA and compile, 3% for compile times), a new image digest each night, two hosts per GPU model.

Writing 44,000 runs through `results ingest` would parse, re-serialise and hash each 88 KB document (about 20 ms
a run, 15 minutes); here a run's canonical JSON is spliced from pieces serialised once (only the measurements,
the environment, the image and the time differ from night to night), and the rows go to the database in bulk
(SQLite: one transaction; PostgreSQL: COPY). The rows are the ones `results ingest` stores: run_document() is
the same document, and its canonical bytes hash to the same sha256; the judge's views (sql_rows.judge_view) are
spliced the same way (tests/benchmarks/test_store_scale.py holds both to an ingest's).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BASE = ROOT / "evidence/fleet-runs/h100/2026-12-05T18-27Z.json"
GPUS = ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA L4", "NVIDIA L40S",
        "NVIDIA B200", "Tesla T4", "NVIDIA A10G", "NVIDIA RTX 6000 Ada Generation", "NVIDIA GH200 480GB",
        "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA A100-SXM4-40GB", "NVIDIA A100 80GB PCIe", "NVIDIA L40",
        "NVIDIA B100", "NVIDIA GB200", "NVIDIA RTX A6000", "NVIDIA A30", "NVIDIA H800")  # fmt: skip
VARIANTS = ("cu126", "cu128", "cu129", "cu130", "cu128-py311", "cu130-py313")
Row = tuple[str | None, ...]  # sql_rows.RUN_COLUMNS


def base_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(BASE.read_text(encoding="utf-8"))
    return document


def _spread(metric: str) -> float:
    if "compile_s" in metric:
        return 0.03
    return 0.02 if metric.startswith(("conv.", "sdpa.", "compile.")) else 0.01


def _varied(base: dict[str, Any], gpu: int, variant: int, day: int) -> dict[str, Any]:
    """The parts of a run that differ from the base run's: started_at, measurements, environment, image, manifest."""
    rng = random.Random(f"{day}-{gpu}-{variant}")
    started = time.gmtime(1_767_225_600 + day * 86_400 + gpu * 60 + variant)  # 2026-01-01 + day
    measurements = copy.deepcopy(base["measurements"])
    for name, measured in measurements.items():
        factor = rng.gauss(1.0, _spread(name))
        for field in ("value", "median", "min", "max"):
            if isinstance(measured.get(field), int | float) and not isinstance(measured.get(field), bool):
                measured[field] *= factor
    host = f"{GPUS[gpu]}-{day % 2}"
    environment = copy.deepcopy(base["environment"])
    environment["host"] = {"sha256": hashlib.sha256(host.encode()).hexdigest()[:16], "source": "hostname"}
    for card in environment["gpus"]:
        card["name"], card["uuid"] = GPUS[gpu], f"GPU-{host}"
    digest = "sha256:" + hashlib.sha256(f"{VARIANTS[variant]}-{day}".encode()).hexdigest()
    return {
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", started),
        "measurements": measurements,
        "environment": environment,
        "image": {"digest": digest, "revision": None, "ref": f"ghcr.io/o/pytorch-cuda@{digest}"},
        "manifest": {"path": "/etc/pytorch-cuda/manifest.json", "origin": "default", "found": True, "error": None,
                     "content": {"target": VARIANTS[variant], "flavour": "runtime"}},
    }  # fmt: skip


def run_document(base: dict[str, Any], gpu: int, variant: int, day: int) -> dict[str, Any]:
    """One run's results document (a file the nightly would ingest)."""
    return {**base, **_varied(base, gpu, variant, day)}


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Fleet:
    """The runs of ``gpus`` x ``variants`` a night, as the rows a store holds, spliced from pieces."""

    def __init__(self, gpus: int, variants: int) -> None:
        from pytorch_cuda.run_store.record import subject_of
        from pytorch_cuda.run_store.run_identity import history_key
        from pytorch_cuda.run_store.sql_rows import VIEW_MARK, judge_view
        from pytorch_cuda_contract.results_file import parse_results

        self.gpus, self.variants, self.base = gpus, variants, base_document()
        self._constant = {k: _canonical(v) for k, v in self.base.items()}
        view = json.loads(judge_view(self.base))  # the judge's view of the base run: its tests' outcomes
        self._view = {k: _canonical(view[k]) for k in ("tests", VIEW_MARK)}
        self._parse, self._subject_of, self._history_key = parse_results, subject_of, history_key

    def canonical(self, varied: dict[str, Any], *, view: bool = False) -> str:
        """The canonical JSON (record.canonical_bytes) of the base run with ``varied`` in place of its parts
        (``view``: the judge's view of it, sql_rows.judge_view)."""
        pieces = {**self._constant, **(self._view if view else {}), **{k: _canonical(v) for k, v in varied.items()}}
        return "{" + ",".join(f"{_canonical(k)}:{pieces[k]}" for k in sorted(pieces)) + "}"

    def entry(self, gpu: int, variant: int, day: int) -> tuple[Row, str]:
        """The row `results ingest` stores for this run (sql_rows.run_row), and the judge's view of it."""
        varied = _varied(self.base, gpu, variant, day)
        text = self.canonical(varied)
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        slim = {k: v for k, v in self.base.items() if k not in ("tests", "measurements")} | varied
        results = self._parse(json.dumps({**slim, "measurements": {}}), source="synthetic")
        subject = self._subject_of(results)
        subject_text = json.dumps({"kind": subject.kind, "key": subject.key, "label": subject.label,
                                   "digest": subject.digest, "torch": subject.torch, "cuda": subject.cuda},
                                  sort_keys=True)  # fmt: skip
        name = f"{day:05d}-{gpu}-{variant}.json"
        history = self._history_key(results).text
        row = (sha, subject.key, subject_text, history, varied["started_at"], "nightly", None, None, name, text)
        return row, self.canonical(varied, view=True)

    def entries(self, days: range) -> Iterator[tuple[Row, str]]:
        for day in days:
            for gpu in range(self.gpus):
                for variant in range(self.variants):
                    yield self.entry(gpu, variant, day)

    def write_files(self, folder: Path, days: range) -> list[Path]:
        """The nights' runs as results files (what the nightly ingests)."""
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for day in days:
            for gpu in range(self.gpus):
                for variant in range(self.variants):
                    path = folder / f"{day:05d}-{gpu}-{variant}.json"
                    path.write_text(json.dumps(run_document(self.base, gpu, variant, day)), encoding="utf-8")
                    paths.append(path)
        return paths


def _progress(done: int, total: int, began: float, what: str) -> None:
    rate = done / max(time.perf_counter() - began, 1e-9)
    print(f"  {what}: {done:,} of {total:,} runs ({rate:,.0f} a second)", flush=True)


def bulk_store(fleet: Fleet, location: Path | str, days: range, *, every: int = 5_000) -> None:
    """Store the nights ``days`` of ``fleet`` at ``location`` (a folder, a SQLite file or a PostgreSQL URI) in bulk,
    printing progress every ``every`` runs."""
    from pytorch_cuda.run_store.backend import open_store
    from pytorch_cuda.run_store.sql_rows import RUN_COLUMNS

    store = open_store(location, create=True)
    total, began = len(days) * fleet.gpus * fleet.variants, time.perf_counter()
    report: Callable[[int], None] = lambda n: _progress(n, total, began, "stored")  # noqa: E731
    db: Any = getattr(store, "_db", None)
    if isinstance(location, str):  # PostgreSQL: COPY, one transaction
        entries, n = fleet.entries(days), 0
        with db.transaction():
            while chunk := list(itertools.islice(entries, every)):  # the runs, then their views, a chunk at a time
                with db.cursor().copy(f"COPY runs ({','.join(RUN_COLUMNS)}) FROM STDIN") as copying:
                    for row, _ in chunk:
                        copying.write_row(row)
                with db.cursor().copy("COPY judge_views (sha256, view) FROM STDIN") as copying:
                    for row, view in chunk:
                        copying.write_row((row[0], view))
                n += len(chunk)
                report(n)
    elif db is not None:  # SQLite: one transaction
        marks = ",".join("?" * len(RUN_COLUMNS))
        db.execute("BEGIN IMMEDIATE")
        for n, (row, view) in enumerate(fleet.entries(days), 1):
            db.execute(f"INSERT INTO runs VALUES ({marks})", row)
            db.execute("INSERT INTO judge_views VALUES (?, ?)", (row[0], view))
            if n % every == 0:
                report(n)
        db.execute("COMMIT")
    else:
        _bulk_files(fleet, Path(location), days, report, every)
    report(total)


def _bulk_files(fleet: Fleet, store: Path, days: range, report: Callable[[int], None], every: int) -> None:
    from pytorch_cuda.run_store.record import Record, RunSubject
    from pytorch_cuda.run_store.store import _check_store, write_index

    _check_store(store, create=True)
    for n, (row, _) in enumerate(fleet.entries(days), 1):
        sha, key, subject, name, text = (str(row[i]) for i in (0, 1, 2, 8, 9))
        record = Record(sha, RunSubject(**json.loads(subject)), None, name, json.loads(text))
        path = store / "runs" / key / f"{sha}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record.document(), indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        if n % every == 0:
            report(n)
    write_index(store)
