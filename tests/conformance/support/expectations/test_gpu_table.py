"""Every GPU the suite names gets its expectations from its architecture; per-SKU peaks only for % of datasheet."""

from __future__ import annotations

import pytest

from conformance.support.expectations.ratios import (
    GATE_FRACTION,
    NEWER_THAN_TABLE,
    RATIO_DTYPES,
    expected_ratios,
    ratio_note,
)
from pytorch_cuda_contract import gpu_models
from pytorch_cuda_contract.gpu_models import GpuModel, Peaks
from pytorch_cuda_contract.peaks import lookup_peak

# (torch.cuda.get_device_name(), compute capability, peak-table entry or None, fp16 / tf32 ratio, conservative)
Part = tuple[str, tuple[int, int], str | None, float, float | None, bool]
PARTS: list[Part] = [
    ("NVIDIA A40", (8, 6), "A40", 4.0, 2.0, False),
    ("NVIDIA L40", (8, 9), "L40", 2.0, 1.0, False),
    ("NVIDIA L40S", (8, 9), "L40S", 4.0, 2.0, False),
    ("NVIDIA L4", (8, 9), "L4", 4.0, 2.0, False),
    ("NVIDIA RTX 6000 Ada Generation", (8, 9), "RTX 6000 Ada", 4.0, 2.0, False),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", (12, 0), "RTX PRO 6000 Blackwell", 4.0, 2.0, False),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", (12, 0), "RTX PRO 6000 Blackwell", 4.0, 2.0, False),
    ("NVIDIA GeForce RTX 4090", (8, 9), None, 2.0, 1.0, False),
    ("NVIDIA GeForce RTX 3090", (8, 6), None, 2.0, 1.0, False),
    ("NVIDIA GeForce RTX 5090", (12, 0), None, 2.0, 1.0, False),
    ("NVIDIA GeForce RTX 2080 Ti", (7, 5), None, 4.0, None, False),
    ("NVIDIA GB10", (12, 1), None, 2.0, 1.0, False),
    ("NVIDIA Thor", (11, 0), None, 2.0, 1.0, False),
    ("NVIDIA Thor", (10, 1), None, 2.0, 1.0, False),
    ("Orin", (8, 7), None, 4.0, 2.0, False),
    ("NVIDIA H800", (9, 0), "H800 SXM", 14.8, 7.4, False),
    ("NVIDIA H800 PCIe", (9, 0), "H800 PCIe", 14.8, 7.4, False),
    ("NVIDIA A800-SXM4-80GB", (8, 0), "A800", 16.0, 8.0, False),
    ("NVIDIA A800 80GB PCIe", (8, 0), "A800", 16.0, 8.0, False),
    ("NVIDIA H100 80GB HBM3", (9, 0), "H100 SXM", 14.8, 7.4, False),
    ("NVIDIA H100 PCIe", (9, 0), "H100 PCIe", 14.8, 7.4, False),
    ("NVIDIA H100 NVL", (9, 0), "H100 NVL", 13.9, 7.0, False),
    ("NVIDIA H200", (9, 0), "H200 SXM", 14.8, 7.4, False),
    ("NVIDIA H200 NVL", (9, 0), "H200 NVL", 13.9, 7.0, False),
    ("NVIDIA GH200 480GB", (9, 0), "GH200", 14.8, 7.4, False),
    ("NVIDIA GH200 144G HBM3e", (9, 0), "GH200", 14.8, 7.4, False),
    ("NVIDIA H20", (9, 0), None, 3.4, 1.7, False),
    ("NVIDIA L20", (8, 9), None, 2.0, 1.0, False),
    ("NVIDIA A100-SXM4-80GB", (8, 0), "A100", 16.0, 8.0, False),
    ("NVIDIA A100 80GB PCIe", (8, 0), "A100", 16.0, 8.0, False),
    ("NVIDIA A10", (8, 6), "A10", 4.0, 2.0, False),
    ("NVIDIA A10G", (8, 6), "A10G", 4.0, 2.0, False),
    ("Tesla T4", (7, 5), "T4", 8.0, None, False),
    ("Tesla V100-SXM2-16GB", (7, 0), "V100 SXM2", 8.0, None, False),
    ("Tesla V100S-PCIE-32GB", (7, 0), "V100S PCIe", 7.9, None, False),
    ("NVIDIA B200", (10, 0), "B200", 30.0, 15.0, False),
    ("NVIDIA B300", (10, 3), None, 30.0, 15.0, False),
    ("NVIDIA X999", (13, 0), None, 2.0, 1.0, True),
    ("NVIDIA Ampere unlisted", (8, 8), None, 2.0, 1.0, True),
]


@pytest.mark.parametrize("part", PARTS, ids=[f"{p[0]}-{p[1][0]}.{p[1][1]}" for p in PARTS])
def test_every_listed_part(part: Part) -> None:
    name, capability, peak, fp16, tf32, conservative = part
    spec = lookup_peak(name)
    assert (spec.gpu if spec else None) == peak
    ratios = expected_ratios(capability, name)
    assert ratios is not None, "every GPU with tensor cores gets ratio gates"
    assert (ratios.fp16, ratios.tf32, ratios.conservative) == (fp16, tf32, conservative)
    assert ratios.bound("fp16") == pytest.approx(GATE_FRACTION * fp16)


def test_gh200_is_not_an_h200_and_h200_is_not_gh200() -> None:
    assert lookup_peak("NVIDIA GH200 480GB") != lookup_peak("NVIDIA H200")
    assert lookup_peak("NVIDIA GH200 480GB") is not None
    assert lookup_peak("NVIDIA GH200 480GB").gpu == "GH200"  # type: ignore[union-attr]


def test_newer_gpu_gets_conservative_floors_and_a_note() -> None:
    ratios = expected_ratios((14, 0), "NVIDIA Future")
    assert ratios is NEWER_THAN_TABLE
    note = ratio_note(ratios, (14, 0), "fp16")
    assert "not in the suite's architecture table" in note
    assert ratios.ceiling("fp16") is None  # no upper gate from a guess
    assert expected_ratios((9, 0), "NVIDIA H200").ceiling("fp16") == pytest.approx(37.0)  # type: ignore[union-attr]


def test_a_slow_tensor_core_path_fails_the_architecture_gate_on_an_unknown_sku() -> None:
    ratios = expected_ratios((8, 9), "NVIDIA RTX 5000 Ada Generation")  # not in the peak table
    assert lookup_peak("NVIDIA RTX 5000 Ada Generation") is None
    assert ratios is not None
    bound = ratios.bound("fp16")
    assert bound is not None
    assert bound > 1.1  # fp16 at fp32 speed (no tensor cores) fails


def test_pre_tensor_core_gpus_are_recorded_not_gated() -> None:
    assert expected_ratios((6, 1), "NVIDIA GeForce GTX 1080") is None


def test_a_mig_slice_has_no_datasheet_peak_but_keeps_its_architecture_gates() -> None:
    name = "NVIDIA H100 80GB HBM3 MIG 1g.10gb"
    assert lookup_peak(name) is None  # 1/7 of the SMs: 60% of the full H100's peak would fail a healthy slice
    ratios = expected_ratios((9, 0), name)
    assert ratios is not None
    assert ratios.bound("fp16") == pytest.approx(GATE_FRACTION * 14.8)


def _own_ratio(model: GpuModel, dtype: str) -> float | None:
    assert model.peaks is not None
    peak: float | None = getattr(model.peaks, dtype)
    return None if peak is None else peak / model.peaks.fp32


@pytest.mark.parametrize("model", [m for m in gpu_models.GPU_MODELS if m.peaks], ids=lambda m: m.name)
def test_every_table_model_is_gated_below_its_own_datasheet_ratio(model: GpuModel) -> None:
    """A healthy card reaches its datasheet ratio; its gate must sit well under it, never at its flagship's."""
    ratios = expected_ratios((model.capability[0], model.capability[1]), f"NVIDIA {model.name}")
    assert ratios is not None
    for dtype in RATIO_DTYPES:
        own, bound = _own_ratio(model, dtype), ratios.bound(dtype)
        assert (own is None) == (bound is None), f"{model.name} {dtype}"
        if own is not None and bound is not None:
            assert bound < 0.75 * own, f"{model.name}: {dtype} gate {bound} is not well below its own ratio {own:.2f}"


def test_a_cut_down_part_added_to_the_table_gets_its_own_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """One table line with the part's datasheet peaks is enough: it is not gated on its flagship's (the L40S's)."""
    flagship = expected_ratios((8, 9), "NVIDIA L40S")
    assert flagship is not None
    assert flagship.bound("fp16") == pytest.approx(GATE_FRACTION * 4.0)
    cut_down = GpuModel(
        "L30", ("L30",), gpu_models.model_named("L40S").capability, "pcie", Peaks(60.0, 60.0, 120.0, 120.0)
    )
    monkeypatch.setattr(gpu_models, "GPU_MODELS", (*gpu_models.GPU_MODELS, cut_down))
    ratios = expected_ratios((8, 9), "NVIDIA L30")
    assert ratios is not None
    assert (ratios.fp16, ratios.tf32) == (2.0, 1.0)
    assert (ratios.bound("fp16"), ratios.bound("tf32")) == pytest.approx((GATE_FRACTION * 2.0, GATE_FRACTION * 1.0))
    assert "L30 120/60/60" in ratios.family


def test_the_l20_is_gated_on_its_own_estimated_ratios_not_the_l40s() -> None:
    """The L20 (AD102, cut down) has no datasheet peaks in the table: declared ratios, marked estimated."""
    ratios, flagship = expected_ratios((8, 9), "NVIDIA L20"), expected_ratios((8, 9), "NVIDIA L40S")
    assert ratios is not None
    assert flagship is not None
    assert ratios.estimated
    assert not flagship.estimated
    for dtype, healthy in (("fp16", 2.0), ("bf16", 2.0), ("tf32", 1.0)):  # the L40's rates on the same die
        bound = ratios.bound(dtype)
        assert bound == pytest.approx(GATE_FRACTION * healthy)
        assert (bound or 0.0) < healthy < (flagship.ratio(dtype) or 0.0)
        assert ratios.ceiling(dtype) is None  # no upper gate from an estimate
    assert "estimated" in ratio_note(ratios, (8, 9), "fp16")
