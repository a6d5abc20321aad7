"""The folder store's index on ingest (issues 54, 55): N runs ingested one by one into a new folder store, the index
updated from the one on disk plus the new run (what an ingest does) against rebuilt from every stored run (what it
did before), side by side in one process; the CPU time (user + system) of the ingests, and the index each leaves,
which must be the same bytes.

    .venv/bin/python benchmarks/folder_index.py [--runs 200]
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.synthetic_fleet import GPUS, VARIANTS, base_document, run_document  # noqa: E402
from pytorch_cuda.run_store import files, ingest  # noqa: E402
from pytorch_cuda.run_store.store import write_index  # noqa: E402


def _ingest_one_by_one(paths: list[Path], store: Path) -> float:
    began = time.process_time()
    for path in paths:
        ingest([path], store)
    return time.process_time() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder, base = Path(scratch), base_document()
        paths = []
        for n in range(args.runs):
            day, rest = divmod(n, len(GPUS) * len(VARIANTS))
            path = folder / "incoming" / f"run-{n:04d}.json"
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(run_document(base, rest % len(GPUS), rest // len(GPUS), day)))
            paths.append(path)
        updated = _ingest_one_by_one(paths, folder / "updated")
        vars(files)["write_index"] = functools.partial(write_index, full=True)  # the ingest before this change
        rebuilt = _ingest_one_by_one(paths, folder / "rebuilt")
        same = (folder / "updated/index.json").read_bytes() == (folder / "rebuilt/index.json").read_bytes()
    print(f"{args.runs} runs ingested one by one into a folder store, CPU seconds (user + system):")
    print(f"  index rebuilt from every stored run (before): {rebuilt:8.2f} s")
    print(f"  index updated from itself + the new run (now): {updated:8.2f} s  ({rebuilt / updated:.1f}x less)")
    print(f"  the two indexes are the same bytes: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
