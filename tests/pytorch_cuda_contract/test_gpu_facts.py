"""The GPU facts have one home (pytorch_cuda_contract.gpu): the table says what the architectures run, and no
other module compares a compute capability with a literal of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytorch_cuda_contract.gpu import (
    EVERY_DTYPE_FROM,
    ComputeCapability,
    GpuDevice,
    architecture,
    is_native,
    needs,
    verdict_by_capability,
)

ROOT = Path(__file__).resolve().parents[2]
LITERAL_COMPARISON = re.compile(r"[<>]=?\s*\(\d+,\s*\d+\)")


@pytest.mark.parametrize(
    ("dtype", "capability", "native"),
    [("fp16", (7, 0), True), ("fp16", (6, 1), False), ("bf16", (7, 5), False), ("bf16", (8, 0), True),
     ("tf32", (8, 6), True), ("tf32", (7, 5), False), ("fp32", (6, 0), True), ("bf16", (9, 0), True)],
)  # fmt: skip
def test_the_table(dtype: str, capability: tuple[int, int], native: bool) -> None:
    assert is_native(dtype, capability) is native


def test_what_the_table_says_in_words() -> None:
    assert needs("bf16") == "compute capability >= 8.0"
    assert architecture((9, 0)) == "Hopper"
    assert architecture((8, 6)) == "Ampere"
    assert architecture((6, 1)) == "pre-Volta"
    assert verdict_by_capability("tf32", (7, 5)) == "unsupported"
    assert verdict_by_capability("bf16", (7, 5)) == "emulated"
    assert EVERY_DTYPE_FROM == (8, 0)
    assert ComputeCapability.parse("12.0") == (12, 0)
    assert ComputeCapability.parse("?") is None
    assert ComputeCapability(9, 0).sm == "sm_90"
    t4 = GpuDevice(0, "Tesla T4", ComputeCapability(7, 5), 16 * 2**30)
    assert (t4.cc, t4.sm, t4.native("fp16"), t4.native("bf16")) == ("7.5", "sm_75", True, False)


def test_no_module_compares_a_capability_with_its_own_literal() -> None:
    found = []
    for folder in ("conformance", "precision_check", "pytorch_cuda_entry", "pytorch_cuda"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            lines = path.read_text(encoding="utf-8").splitlines()
            found += [f"{name}:{n}" for n, line in enumerate(lines, 1) if LITERAL_COMPARISON.search(line)]
    assert found == []
