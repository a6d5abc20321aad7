# mypy: disable-error-code="arg-type,attr-defined"
# (checks called with plain dicts; pytest sets .pytestmark on the decorated function at run time)
"""The fault-coverage checks run without a GPU: the fp32 attention and conv IEEE bands, TorchScript's profiling and
fusion checks, the compile speed-up recorded without bound, the range flags recorded as informational, and the
fault patches they name (fault_coverage/patches/), each shown passing on a sound input and failing on a broken one.
CUDA tensors are replaced by CPU ones: the checks' code is the same."""

from __future__ import annotations

import runpy
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from torch.nn import functional as F  # noqa: N812 - the conventional name

from conformance.support.workloads.compile_speed import CompileTiming
from conformance.support.workloads.repetition import Timings
from pytorch_cuda_contract.metrics import build_metric

with warnings.catch_warnings():  # the suite registers its cpu/gpu/informational markers in its own conftest
    warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
    from conformance import test_amp, test_article, test_compile, test_compile_speed, test_sdpa

PATCHES = Path(__file__).resolve().parents[2] / "fault_coverage" / "patches"
CPU = torch.device("cpu")


class Recorded:
    def __init__(self) -> None:
        self.metrics: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []

    def metric(self, name: str, value: float | str, unit: str, **fields: object) -> None:
        self.metrics[name] = build_metric(value, unit, fields)

    def note(self, text: str) -> None:
        self.notes.append(text)


@pytest.fixture
def recorded() -> Recorded:
    return Recorded()


def as_tf32(tensor: torch.Tensor) -> torch.Tensor:
    """fp32 rounded to TF32's 10-bit mantissa, to nearest (what TF32 tensor cores read)."""
    if tensor.dtype != torch.float32:
        return tensor
    return ((tensor.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


def tf32_inputs(function: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    def wrapped(*args: object, **kwargs: object) -> torch.Tensor:
        return function(*(as_tf32(a) if isinstance(a, torch.Tensor) else a for a in args), **kwargs)

    return wrapped


def test_fp32_attention_is_ieee_and_tf32_fails(recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    test_sdpa.test_sdpa_fp32_default_dispatch_is_ieee(CPU, recorded.metric, recorded.note)
    metric = recorded.metrics["sdpa.fp32.error"]
    assert metric["value"] < 1e-6
    assert (metric["bound"], metric["bound_kind"]) == (1e-5, "max")
    monkeypatch.setattr(F, "scaled_dot_product_attention", tf32_inputs(F.scaled_dot_product_attention))
    with pytest.raises(AssertionError, match=r"TF32 forced into attention \(NVIDIA_TF32_OVERRIDE=1"):
        test_sdpa.test_sdpa_fp32_default_dispatch_is_ieee(CPU, recorded.metric, recorded.note)
    assert 1e-4 < recorded.metrics["sdpa.fp32.error"]["value"] < 1e-3


def test_fp32_conv_is_ieee_and_tf32_fails(recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    test_article.test_cudnn_conv_fp32_is_ieee(CPU, recorded.metric)
    metric = recorded.metrics["conv.fp32.error"]
    assert metric["value"] < 1e-6
    assert (metric["bound"], metric["bound_kind"]) == (1e-5, "max")
    monkeypatch.setattr(F, "conv2d", tf32_inputs(F.conv2d))
    with pytest.raises(AssertionError, match="cuDNN uses TF32 regardless of the flag"):
        test_article.test_cudnn_conv_fp32_is_ieee(CPU, recorded.metric)
    assert 1e-4 < recorded.metrics["conv.fp32.error"]["value"] < 1e-3


def test_range_flags_are_recorded_without_bound(recorded: Recorded) -> None:
    test_article.test_fp16_overflows_where_bf16_does_not("cpu", recorded.metric, recorded.note)
    for name in ("range_fp16_overflow_cpu", "range_bf16_overflow_cpu"):
        assert recorded.metrics[name]["informational"] is True
    marks = [m for m in test_article.test_fp16_overflows_where_bf16_does_not.pytestmark if m.name == "informational"]
    assert len(marks) == 1
    assert "test_fp16_reduction_does_not_overflow_at_65504" in marks[0].args[0]


def test_torchscript_cpu_check_passes_and_names_its_faults(recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    test_compile.test_torchscript_fp32_on_cpu(recorded.metric)
    assert recorded.metrics["torchscript_cpu_fp32_normalized_error"]["value"] < 1e-6
    legacy = torch._C._jit_set_profiling_executor(False)
    try:
        with pytest.raises(AssertionError, match="profiling executor is off"):
            test_compile.test_torchscript_fp32_on_cpu(recorded.metric)
    finally:
        torch._C._jit_set_profiling_executor(legacy)
    monkeypatch.setattr(torch.jit, "script", lambda module: module)  # what PYTORCH_JIT=0 makes of it
    with pytest.raises(AssertionError, match="PYTORCH_JIT=0"):
        test_compile.test_torchscript_fp32_on_cpu(recorded.metric)


def test_torchscript_gpu_check_fails_without_a_fusion_group(recorded: Recorded) -> None:
    """On the CPU nothing fuses (release wheels have no LLVM): the GPU check's failure, with its named causes."""
    with pytest.raises(AssertionError, match=r"holds no fusion group .*_jit_set_texpr_fuser_enabled\(False\)"):
        test_compile.test_torchscript_fp16_on_gpu(CPU, recorded.metric)


def test_fusion_groups_are_found_inside_blocks() -> None:
    graph = torch._C.parse_ir(
        """graph(%x : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %f : Tensor = prim::TensorExprGroup(%x)
      -> (%f)
    block1():
      -> (%x)
  return (%r)"""
    )
    assert test_compile.fusion_groups(graph) == ["prim::TensorExprGroup"]
    plain = torch._C.parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::sin(%x)\n  return (%y)")
    assert test_compile.fusion_groups(plain) == []


def _timing(eager_ms: float, compiled_ms: float, code_modules: int) -> CompileTiming:
    def timed(ms: float) -> Timings:
        return Timings((ms,) * 5, "target", 0.0, 0.5)

    return CompileTiming(2.0, timed(eager_ms), timed(compiled_ms), 1e-6, code_modules)


def test_compile_speedup_is_recorded_not_gated(recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(test_compile_speed, "device_identity", lambda _device: {"index": 0, "name": "fake"})
    slow = {"training": _timing(1.0, 3.0, 2)}  # a third of eager's speed: the old 0.5x floor failed it
    test_compile_speed.test_compiled_matches_eager_and_is_timed("training", slow, recorded.metric, recorded.note)
    speedup = recorded.metrics["compile.speedup.training"]
    assert speedup["value"] == pytest.approx(1 / 3)
    assert speedup["informational"] is True
    assert "bound" not in speedup
    assert "recorded, not gated" in recorded.notes[-1]
    nothing = {"training": _timing(1.0, 1.0, 0)}
    with pytest.raises(AssertionError, match="TORCHDYNAMO_DISABLE=1"):
        test_compile_speed.test_compiled_matches_eager_and_is_timed("training", nothing, recorded.metric, recorded.note)


@pytest.mark.filterwarnings("ignore:User provided device_type of 'cuda', but CUDA is not available")
def test_autocast_apis_that_do_not_autocast_are_named() -> None:
    """CPU tensors under autocast("cuda") stay fp32, as under an autocast that is a no-op: both APIs are named."""
    wrong = test_amp._default_and_deprecated_autocast(torch.ones(4, 4))
    assert len(wrong) == 2
    assert "torch.amp.autocast('cuda') (default dtype)" in wrong[0]
    assert "deprecated torch.cuda.amp.autocast()" in wrong[1]


@pytest.fixture
def restore_torch(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The attributes the patches replace, put back afterwards."""
    from torch.amp.autocast_mode import autocast

    for owner, name in (
        (autocast, "__init__"),
        (torch.amp.GradScaler, "__init__"),
        (torch, "conv2d"),
        (F, "conv2d"),
        (F, "scaled_dot_product_attention"),
    ):
        monkeypatch.setattr(owner, name, getattr(owner, name))
    flags = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = flags


def _apply(patch: str) -> None:
    runpy.run_path(str(PATCHES / f"{patch}.py"))


@pytest.mark.usefixtures("restore_torch")
def test_autocast_disabled_patch_makes_autocast_a_no_op() -> None:
    _apply("autocast_disabled")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (torch.ones(4, 4) @ torch.ones(4, 4)).dtype == torch.float32
    with torch.autocast("cpu", torch.bfloat16, True):  # enabled passed by position
        assert not torch.is_autocast_enabled("cpu")


@pytest.mark.usefixtures("restore_torch")
def test_grad_scaler_disabled_patch() -> None:
    _apply("grad_scaler_disabled")
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    assert not scaler.is_enabled()
    assert scaler.get_scale() == 1.0


@pytest.mark.usefixtures("restore_torch")
def test_cudnn_tf32_forced_patch_runs_every_conv_with_tf32_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def spy(*args: object, **kwargs: object) -> str:
        seen.append(torch.backends.cudnn.allow_tf32)
        return "out"

    monkeypatch.setattr(torch, "conv2d", spy)
    _apply("cudnn_tf32_forced")
    torch.backends.cudnn.allow_tf32 = False
    assert F.conv2d is torch.conv2d
    assert F.conv2d("x", "w", padding=1) == "out"
    assert seen == [True]
    assert torch.backends.cudnn.allow_tf32 is False  # put back after the call


@pytest.mark.usefixtures("restore_torch")
def test_sdpa_fp32_tf32_patch_runs_fp32_cuda_attention_on_math_with_tf32(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bool, bool, bool]] = []

    def spy(query: object, *args: object, **kwargs: object) -> str:
        backends = torch.backends.cuda
        seen.append((backends.matmul.allow_tf32, backends.math_sdp_enabled(), backends.flash_sdp_enabled()))
        return "out"

    monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
    _apply("sdpa_fp32_tf32")
    torch.backends.cuda.matmul.allow_tf32 = False
    fp32_cuda = SimpleNamespace(is_cuda=True, dtype=torch.float32)
    assert F.scaled_dot_product_attention(fp32_cuda, "k", "v") == "out"
    assert seen[-1] == (True, True, False)
    assert torch.backends.cuda.matmul.allow_tf32 is False
    F.scaled_dot_product_attention(torch.ones(1, 1, 2, 4), "k", "v")  # CPU: untouched
    assert seen[-1] == (False, True, True)


def test_texpr_fuser_off_patch() -> None:
    enabled = torch._C._jit_texpr_fuser_enabled()
    try:
        _apply("texpr_fuser_off")
        assert torch._C._jit_texpr_fuser_enabled() is False
    finally:
        torch._C._jit_set_texpr_fuser_enabled(enabled)


def test_torchscript_legacy_executor_patch() -> None:
    previous = torch._C._jit_set_profiling_executor(True)
    try:
        _apply("torchscript_legacy_executor")
        assert torch._C._jit_set_profiling_executor(True) is False  # it returns the value the patch left
    finally:
        torch._C._jit_set_profiling_executor(previous)
