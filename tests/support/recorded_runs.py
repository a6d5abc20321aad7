"""Recorded results files the report tests read: the committed H200 run and hand-written ones."""

from __future__ import annotations

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
FIXTURES: Final = ROOT / "tests/fixtures/results"
H200: Final = FIXTURES / "h200.json"  # the bare H200 run of 2026-12-02 (stored only here), converted to schema 2
H100: Final = FIXTURES / "h100-v2.json"  # two H100s, every stable metric, NCCL bus bandwidth
T4: Final = FIXTURES / "t4-v2.json"  # Turing: bf16 emulated, no TF32
UNKNOWN_GPU: Final = FIXTURES / "unknown-gpu-v2.json"  # not in the peak table
H100_FLEET: Final = ROOT / "evidence/fleet-runs/h100/2026-12-05T18-27Z.json"  # bare H100, with the MAMF and LM rows
HALFWAY: Final = FIXTURES / "a100-halfway-v2.json"  # GEMM measured, then the AMP test failed and the rest did not run
