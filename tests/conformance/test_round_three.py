"""Issue 52's weak items, each shown failing on a broken input (pure, no GPU): the fp32 conv judged at the image's
default policy (TF32 for cuDNN, PyTorch's default), and the tensor-core conv gate it uses."""

from __future__ import annotations

import warnings

import pytest

from conformance.support.expectations.bounds import tf32_error_gate, throughput_gate
from conformance.support.probes.env_limits import TF32_OFF
from conformance.support.probes.fp32_policy import conv_fp32_math
from pytorch_cuda_contract.peaks import lookup_peak

with warnings.catch_warnings():  # the suite registers its cpu/gpu markers in its own conftest, not here
    warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
    from conformance.test_article import CONV_FLOOR

# PyTorch's default as fp32_policy_snapshot reads it at startup (torch 2.9: the new API's conv value is "none")
DEFAULT = {"cudnn_allow_tf32": True, "cudnn_conv_fp32_precision": "none"}
HOPPER = (9, 0)
# evidence/fault-coverage/{h100,h200}/runs: the fp32 conv with cuDNN's TF32 allowed (the cudnn-tf32-forced runs,
# which allow it around every conv: what the default gives) and with cuDNN off (torch's native IEEE kernels)
TF32_CONV_TFLOPS = {"NVIDIA H100 80GB HBM3": 389.0, "NVIDIA H200": 384.4}
CUDNN_OFF_TFLOPS = {"NVIDIA H100 80GB HBM3": 27.3, "NVIDIA H200": 28.2}
TF32_CONV_ERROR, IEEE_CONV_ERROR = 2.93e-4, 4.24e-7


def test_the_default_policy_gives_tf32_convs_and_says_why() -> None:
    assert conv_fp32_math(DEFAULT, HOPPER, None) == (
        "tf32",
        "torch.backends.cudnn.allow_tf32 was True at startup (PyTorch's default)",
    )


@pytest.mark.parametrize(
    ("policy", "capability", "tf32_off", "named"),
    [
        ({"cudnn_allow_tf32": False}, HOPPER, None, "allow_tf32 was False at startup"),
        ({**DEFAULT, "cudnn_conv_fp32_precision": "ieee"}, HOPPER, None, "fp32_precision was 'ieee'"),
        (DEFAULT, HOPPER, TF32_OFF, "NVIDIA_TF32_OVERRIDE=0"),
        (DEFAULT, (7, 5), None, "no TF32 before compute capability 8.0"),
        ({"cudnn_allow_tf32": {"error": "RuntimeError: mixed"}}, HOPPER, None, "could not be read"),
    ],
)
def test_an_ieee_policy_is_named(
    policy: dict[str, object], capability: tuple[int, int], tf32_off: str | None, named: str
) -> None:
    math, why = conv_fp32_math(policy, capability, tf32_off)
    assert math == "ieee"
    assert named in why


def test_the_new_api_asking_for_tf32_is_tf32() -> None:
    policy: dict[str, object] = {"cudnn_allow_tf32": {"error": "x"}, "cudnn_conv_fp32_precision": "tf32"}
    assert conv_fp32_math(policy, HOPPER, None)[0] == "tf32"


@pytest.mark.parametrize("name", list(TF32_CONV_TFLOPS))
def test_the_default_conv_throughput_passes_tf32_and_fails_cudnn_off(name: str) -> None:
    spec = lookup_peak(name)
    assert spec is not None
    assert spec.tf32 is not None
    gate = throughput_gate(spec.tf32, CONV_FLOOR)
    assert gate.violation(TF32_CONV_TFLOPS[name]) is None
    assert gate.violation(CUDNN_OFF_TFLOPS[name]) is not None  # TF32 allowed, torch's native IEEE kernels ran
    assert gate.violation(43.5) is not None  # an IEEE cuDNN conv (TF32 allowed and not used)
    assert gate.violation(spec.tf32 * 1.2) is not None  # faster than the datasheet: broken timing


def test_the_default_conv_error_lies_in_the_tf32_band() -> None:
    gate = tf32_error_gate("conv")
    assert gate.violation(TF32_CONV_ERROR) is None
    assert gate.violation(IEEE_CONV_ERROR) is not None  # TF32 allowed and not used (cuDNN off)
    assert gate.violation(1.7e-3) is not None  # inputs rounded to bf16: worse than TF32
    assert gate.violation(float("nan")) is not None
