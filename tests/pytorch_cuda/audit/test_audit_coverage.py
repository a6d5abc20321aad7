"""What the audit covers: every lock that exists, a note for each variant that has none (cu126 and cu130 cannot be
locked here), and a round of pins split into pip-audit processes that run side by side, none left out."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from pytorch_cuda.audit.lock_pins import LockedPin, unlocked
from pytorch_cuda.audit.python_audit import CHUNK, PARALLEL, Service, audit_pins
from pytorch_cuda.matrix.build_matrix import Matrix
from tests.support.audit_doubles import pip_audit_answering


def test_a_variant_without_a_lock_is_named(matrix: Matrix, root: Path) -> None:
    notes = unlocked(matrix, root)
    named = [note.split(":")[0] for note in notes]
    assert named == ["cu126-jupyter", "cu126-runtime", "cu130-devel", "cu130-jupyter", "cu130-runtime"]
    assert "`python build.py lock --target cu130 --flavour runtime`" in notes[-1]


def test_the_pins_are_audited_by_processes_side_by_side() -> None:
    pins = [LockedPin("images/a.lock", f"p{n:03}", "1.0") for n in range(PARALLEL * CHUNK + 5)]
    answers = {f"{p.name}==1.0": {"version": "1.0", "vulns": []} for p in pins}
    seen: list[str] = []
    fake = pip_audit_answering(answers, seen)
    together = threading.Barrier(PARALLEL, timeout=10)  # one after another, the first run would wait in vain

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        together.wait()
        return fake(argv)  # type: ignore[no-any-return]

    result = audit_pins(pins, Service(pypi_json="https://pypi.test"), run, lambda url: None, print)
    assert result.audited == len(pins)  # every pin answered once
    assert len(seen) == PARALLEL  # the round in PARALLEL parts
    assert sorted(line for text in seen for line in text.splitlines()) == sorted(answers)
