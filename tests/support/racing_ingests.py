"""Ingests started together: four processes, each with an overlapping share of the same nights, into one store
(a folder, a SQLite file or a PostgreSQL URI), repeated; what each wrote, and what the store holds after."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pytorch_cuda.run_store import read_store
from pytorch_cuda.run_store.backend import StoreLocation

ROOT = Path(__file__).resolve().parents[2]
RACER = """
import json, sys
from pathlib import Path
from pytorch_cuda.run_store import ingest
from pytorch_cuda.run_store.backend import store_location
sys.stdin.readline()  # every racer waits here until all are started
done = ingest([Path(p) for p in sys.argv[2:]], store_location(sys.argv[1]), skip_duplicates=True)
print(json.dumps([s.record.sha256 for s in done.stored]))
"""


def race(store: StoreLocation, paths: list[Path], writers: int = 4) -> tuple[list[str], list[str]]:
    """``writers`` ingests of overlapping shares of ``paths``, released at once: (the sha256 each one says it wrote,
    all together; the sha256 of every run the store holds after)."""
    step = max(1, len(paths) // writers)
    shares = [paths[i * step : i * step + 2 * step] or paths for i in range(writers - 1)] + [paths[::2]]
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, str(store), *map(str, share)], cwd=ROOT, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for share in shares
    ]  # fmt: skip
    for racer in racers:  # the imports are done by now in most of them; the writes start together
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.flush()
    answers = [racer.communicate() for racer in racers]
    failed = [err for racer, (_, err) in zip(racers, answers, strict=True) if racer.returncode != 0]
    assert not failed, failed[0][-2000:]
    claimed = [sha for out, _ in answers for sha in json.loads(out)]
    return claimed, [s.record.sha256 for s in read_store(store)]
