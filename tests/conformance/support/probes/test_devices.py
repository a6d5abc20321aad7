"""The architecture judgement: a card runs the wheel's cubins exactly, by compatibility or by PTX, or not."""

from __future__ import annotations

import pytest

from conformance.support.probes.devices import judge_arch


@pytest.mark.parametrize(
    ("capability", "arch_list", "ok", "exact"),
    [
        ((9, 0), ["sm_80", "sm_86", "sm_90", "sm_100"], True, True),
        ((8, 9), ["sm_80", "sm_86", "sm_90"], True, False),  # L4/L40S run sm_86 cubins
        ((12, 1), ["sm_90", "compute_120"], True, False),  # PTX JIT
        ((7, 0), ["sm_75", "sm_80", "sm_90"], False, False),  # V100 dropped
        ((9, 0), ["sm_80", "sm_90a"], True, True),
        ((10, 0), ["sm_80", "sm_90a"], False, False),  # arch-specific cubins do not carry over
    ],
)
def test_arch_judgement(capability: tuple[int, int], arch_list: list[str], ok: bool, exact: bool) -> None:
    verdict = judge_arch(capability, arch_list)
    assert (verdict.ok, verdict.exact) == (ok, exact), verdict.message
