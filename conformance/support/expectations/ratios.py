"""Expected tensor-core speed-up over FP32 (non-tensor FMA), keyed by ARCHITECTURE (compute capability), dense.
``None``: no tensor-core path for the dtype.

Each architecture's ratios are its reference model's datasheet peaks divided by its FP32 peak, read from the
contract's one GPU table (pytorch_cuda_contract/gpu_models.py); no datasheet number is restated here.  The per-SKU
peaks alone only give "% of datasheet"; every gate that must hold on a GPU the suite has never seen comes from
here.  GeForce parts run FP16/BF16 with FP32 accumulation at half the rate of the datacenter parts of the same
architecture, and TF32 at the FP32 rate: half the datacenter ratios.  A GPU of an architecture not listed here but
with datasheet peaks in the contract's table gets its own datasheet ratios; one newer than both gets the most
conservative tensor-core ratios of any generation (GeForce: 2x / 2x / 1x) and a note.  The suite fails a measured
ratio below GATE_FRACTION (0.6) of the expected one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from pytorch_cuda_contract import gpu_models
from pytorch_cuda_contract.gpu import TENSOR_CORES_FROM
from pytorch_cuda_contract.gpu_models import GpuModel, model_named

RATIO_DTYPES: Final = ("tf32", "fp16", "bf16")
# Fail below 0.6 of the expected ratio.  H100 and H200 measure 0.93-1.10x the expected ratio (tf32 7.6-8.2 of 7.4,
# fp16 13.7-15.1 and bf16 14.3-15.6 of 14.8, every committed run), so a ratio halved crosses on both cards; the old
# half let a halved tf32 (3.8 against 3.7) and bf16 (7.6 against 7.4) through when the ratio was judged alone (a GPU
# outside the peak table).  cuBLAS without a workspace (CUBLAS_WORKSPACE_CONFIG=:0:0) gives tf32 4.14-4.23 < 4.44.
GATE_FRACTION: Final = 0.6
RATIO_CEILING: Final = 2.5  # fail above 2.5x the expected ratio: fp32 itself is crippled (or the table is wrong)
FP32_PEAK_MARGIN: Final = 1.15  # fp32 "highest" may not exceed 1.15x the datasheet fp32 peak
SEVERAL_TIMES: Final = 4.0  # "TF32 is several times FP32": then fp32 must stay well below measured TF32
# fp32's upper bound from the measured TF32 GEMM: TF32 / (this x the expected TF32 ratio).  Forced TF32 (fp32 at
# TF32's speed, 404 on the H200) crosses it; kept at half so that a slower TF32 GEMM (a fault of its own, judged by
# the ratio) does not also fail fp32.
TF32_REFERENCE_FRACTION: Final = 0.5


@dataclass(frozen=True)
class ExpectedRatios:
    family: str
    fp16: float | None
    bf16: float | None
    tf32: float | None
    conservative: bool = False  # not from a datasheet: the weakest tensor-core generation's ratios
    estimated: bool = False  # a cut-down part's ratios declared by name, from no datasheet: a sibling part's rates

    def ratio(self, dtype: str) -> float | None:
        value: float | None = getattr(self, dtype)
        return value

    def bound(self, dtype: str) -> float | None:
        expected = self.ratio(dtype)
        return None if expected is None else GATE_FRACTION * expected

    def ceiling(self, dtype: str) -> float | None:
        expected = self.ratio(dtype)
        return None if expected is None or self.conservative or self.estimated else RATIO_CEILING * expected


def _same(ratios: ExpectedRatios) -> tuple[ExpectedRatios, ExpectedRatios]:
    return ratios, ratios


def _ratio(peak: float | None, fp32: float) -> float | None:
    return None if peak is None else round(peak / fp32, 1)


def datasheet_ratios(family: str, model: GpuModel) -> ExpectedRatios:
    """The ratios a model's datasheet peaks (the contract's GPU table) give, rounded to 0.1, labelled with them."""
    p = model.peaks
    if p is None:
        raise ValueError(f"{model.name} has no datasheet peaks in pytorch_cuda_contract/gpu_models.py")
    numbers = "/".join(f"{x:g}" for x in (p.fp16, p.tf32, p.fp32) if x is not None)
    return ExpectedRatios(f"{family} ({model.name} {numbers})",
                          _ratio(p.fp16, p.fp32), _ratio(p.bf16, p.fp32), _ratio(p.tf32, p.fp32))  # fmt: skip


def _datasheet(family: str, name: str) -> ExpectedRatios:
    return datasheet_ratios(family, model_named(name))


def _as(family: str, ratios: ExpectedRatios) -> ExpectedRatios:
    """Another part's ratios under this part's name."""
    return replace(ratios, family=f"{family}, as {ratios.family}")


def geforce(family: str, datacenter: ExpectedRatios) -> ExpectedRatios:
    """GeForce: FP16/BF16 with FP32 accumulation and TF32 at half the datacenter part's ratio."""
    fp16, bf16, tf32 = (None if r is None else r / 2 for r in (datacenter.fp16, datacenter.bf16, datacenter.tf32))
    return ExpectedRatios(f"{family} (GeForce rates: half of {datacenter.family})", fp16, bf16, tf32)


_VOLTA: Final = _datasheet("Volta", "V100 SXM2")
_TURING: Final = _datasheet("Turing", "T4")
_GA10X: Final = _datasheet("Ampere GA10x", "A10")
_ADA: Final = _datasheet("Ada", "L40S")
_BLACKWELL: Final = _datasheet("Blackwell", "B200")
_RTX_PRO: Final = _datasheet("Blackwell RTX PRO", "RTX PRO 6000 Blackwell")
_NO_DENSE_DATASHEET: Final = "no dense datasheet"
# compute capability -> (datacenter / workstation / embedded, GeForce); the numbers come from the reference model's
# datasheet peaks in pytorch_cuda_contract/gpu_models.py, none is restated here.
BY_CAPABILITY: Final[dict[tuple[int, int], tuple[ExpectedRatios, ExpectedRatios]]] = {
    (7, 0): _same(_VOLTA),
    (7, 2): _same(_as("Volta Xavier (embedded)", _VOLTA)),
    (7, 5): (_TURING, geforce("Turing GeForce", _TURING)),
    (8, 0): _same(_datasheet("Ampere GA100", "A100")),
    (8, 6): (_GA10X, geforce("Ampere GeForce", _GA10X)),
    (8, 7): _same(_as("Ampere Orin (embedded)", _GA10X)),
    (8, 9): (_ADA, geforce("Ada GeForce", _ADA)),
    (9, 0): _same(_datasheet("Hopper", "H100 SXM")),
    (10, 0): _same(_BLACKWELL),
    (10, 1): _same(geforce(f"Blackwell Thor (sm_101; {_NO_DENSE_DATASHEET})", _RTX_PRO)),
    (10, 3): _same(_as("Blackwell Ultra (B300)", _BLACKWELL)),
    (11, 0): _same(geforce(f"Blackwell Thor (sm_110; {_NO_DENSE_DATASHEET})", _RTX_PRO)),
    (12, 0): (_RTX_PRO, geforce("Blackwell GeForce", _RTX_PRO)),
    (12, 1): _same(geforce(f"Blackwell GB10 (DGX Spark; {_NO_DENSE_DATASHEET})", _RTX_PRO)),
}
# Cut-down parts with no datasheet peaks in the contract's table (no "% of datasheet" for them), matched as a whole
# word of the name: their ratios are declared here, not their flagship's.  The H20's are its datasheet's.  The L20's
# (AD102, as the L40 and the L40S) are estimated: NVIDIA's datasheet is not public beyond China, and the L40S's
# gate (half of 4x / 2x) sits exactly at the 2x / 1x that the L40's rates on the same die give a healthy card.
BY_NAME: Final[dict[str, ExpectedRatios]] = {
    "H20": ExpectedRatios("Hopper H20 (cut-down compute)", 3.4, 3.4, 1.7),
    "L20": ExpectedRatios("Ada L20 (cut-down compute; estimated: the L40's rates)", 2.0, 2.0, 1.0, estimated=True),
}
NEWEST: Final = max(BY_CAPABILITY)
NEWER_THAN_TABLE: Final = ExpectedRatios("newer than the suite's table", 2.0, 2.0, 1.0, conservative=True)
FIRST_TENSOR_CORES: Final = TENSOR_CORES_FROM


def is_geforce(device_name: str) -> bool:
    upper = device_name.upper()
    return "GEFORCE" in upper or "TITAN" in upper


def name_words(device_name: str) -> list[str]:
    return gpu_models.device_words(device_name)


def expected_ratios(capability: tuple[int, int], device_name: str) -> ExpectedRatios | None:
    """What the architecture promises for this device; None before tensor cores (cc < 7.0)."""
    words = name_words(device_name)
    for token, ratios in BY_NAME.items():
        if token in words:
            return ratios
    # A model the table holds with datasheet peaks is gated on its OWN ratios, not its architecture's: a cut-down
    # part (the L40 beside the L40S) would otherwise sit at, or under, its flagship's gate while healthy.
    model = gpu_models.find_model(device_name)
    if model is not None and model.peaks is not None and not is_geforce(device_name):
        return datasheet_ratios(model.architecture, model)
    pair = BY_CAPABILITY.get(capability)
    if pair is not None:
        return pair[1] if is_geforce(device_name) else pair[0]
    model = _model_of_new_architecture(capability)
    if model is not None:
        own = datasheet_ratios(f"{model.architecture} {next(iter(capability))}.{tuple(capability)[1]}", model)
        return geforce(own.family, own) if is_geforce(device_name) else own
    if capability > NEWEST:
        return NEWER_THAN_TABLE
    if capability < FIRST_TENSOR_CORES:
        return None
    # An unlisted minor revision of a known generation: the same major's weakest entry (conservative).
    same_major = [r for cc, pair in BY_CAPABILITY.items() if cc[0] == capability[0] for r in pair]
    weakest = min(same_major, key=lambda r: r.fp16 or 0.0, default=NEWER_THAN_TABLE)
    return ExpectedRatios(f"unlisted cc {capability[0]}.{capability[1]}, as {weakest.family}",
                          weakest.fp16, weakest.bf16, weakest.tf32, conservative=True)  # fmt: skip


def _model_of_new_architecture(capability: tuple[int, int]) -> GpuModel | None:
    """The contract table's first model with datasheet peaks of a capability this file does not list."""
    return next((m for m in gpu_models.GPU_MODELS if m.peaks and tuple(m.capability) == tuple(capability)), None)


def ratio_note(ratios: ExpectedRatios, capability: tuple[int, int], dtype: str) -> str:
    expected, bound = ratios.ratio(dtype), ratios.bound(dtype)
    text = f"{ratios.family}: expected {dtype}:fp32 about {expected}x, fail below {bound:g}x"
    if ratios.conservative:
        text += (
            f" (cc {capability[0]}.{capability[1]} is not in the suite's architecture table: conservative "
            "GeForce-level floors; add the GPU, with its datasheet peaks, to pytorch_cuda_contract/gpu_models.py)"
        )
    if ratios.estimated:
        text += " (estimated: no datasheet peaks in pytorch_cuda_contract/gpu_models.py; no upper gate)"
    return text


def fp32_upper_bound(
    datasheet_fp32: float | None, measured_tf32: float | None, ratios: ExpectedRatios | None
) -> tuple[float | None, str]:
    """The most fp32 "highest" may reach, and why: 1.15x the datasheet peak, and where TF32 is several
    times FP32, no more than the measured TF32 divided by half the expected TF32 ratio."""
    bounds: list[tuple[float, str]] = []
    if datasheet_fp32 is not None:
        bounds.append((FP32_PEAK_MARGIN * datasheet_fp32, f"{FP32_PEAK_MARGIN}x the {datasheet_fp32} datasheet peak"))
    expected_tf32 = ratios.tf32 if ratios is not None else None
    if measured_tf32 is not None and expected_tf32 is not None and expected_tf32 >= SEVERAL_TIMES:
        divisor = TF32_REFERENCE_FRACTION * expected_tf32
        bounds.append((measured_tf32 / divisor, f"measured TF32 {measured_tf32:.1f} / {divisor:g}"))
    if not bounds:
        return None, "no datasheet peak and no TF32 reference"
    return min(bounds)
