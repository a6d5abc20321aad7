"""The pin comparisons name both values; the wheel is the manifest's, else the one installed."""

from __future__ import annotations

from conformance.support.expectations.pins import compare_cudnn, compare_exact, compare_nccl, pick_wheel


def test_pin_comparisons_name_both_values() -> None:
    assert compare_exact("torch", "2.9.1+cu128", "2.9.1+cu128", "torch.__version__") is None
    message = compare_exact("torch", "2.9.1+cu128", "2.9.0+cu128", "torch.__version__")
    assert message is not None
    assert "2.9.1+cu128" in message
    assert "2.9.0+cu128" in message
    assert compare_cudnn("9.10.2.21", 91002) is None
    wrong_cudnn = compare_cudnn("9.10.2.21", 90800)
    assert wrong_cudnn is not None
    assert "91002" in wrong_cudnn
    assert "9.8.0" in wrong_cudnn
    missing_cudnn = compare_cudnn("9.10.2.21", None)
    assert missing_cudnn is not None
    assert "is None" in missing_cudnn
    assert compare_nccl("2.27.5", "2.27.5") is None
    wrong_nccl = compare_nccl("2.27.5", "2.26.2")
    assert wrong_nccl is not None
    assert "2.26.2" in wrong_nccl


def test_pick_wheel_prefers_manifest_then_autodetects() -> None:
    installed = {"nvidia-cudnn-cu12": "9.10.2.21", "nvidia-nccl-cu13": "2.28.9"}
    assert pick_wheel("cudnn", {"cudnn": "nvidia-cudnn-cu12"}, installed.get) == ("nvidia-cudnn-cu12", "9.10.2.21")
    assert pick_wheel("cudnn", {"cudnn": "nvidia-cudnn-cu11"}, installed.get) == ("nvidia-cudnn-cu11", None)
    assert pick_wheel("nccl", None, installed.get) == ("nvidia-nccl-cu13", "2.28.9")
    assert pick_wheel("nccl", None, lambda name: None) == (None, None)
