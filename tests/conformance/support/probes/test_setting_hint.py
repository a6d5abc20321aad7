"""A failure under a setting the contract says breaks this stack names it; under any other it adds nothing."""

from __future__ import annotations

import pytest

from conformance.support.probes import setting_hint as known_settings


def test_eager_module_loading_on_nccl_2_27_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(known_settings, "_nccl", lambda: "2.27.5")
    monkeypatch.setenv("CUDA_MODULE_LOADING", "EAGER")
    hint = known_settings.known_setting_hint()
    assert hint.startswith("\nCUDA_MODULE_LOADING=EAGER is set: ")
    assert "Fix: unset CUDA_MODULE_LOADING" in hint


def test_the_image_default_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_MODULE_LOADING", raising=False)
    assert known_settings.known_setting_hint() == ""
    monkeypatch.setenv("CUDA_MODULE_LOADING", "LAZY")
    assert known_settings.known_setting_hint() == ""


def test_the_image_reports_its_nccl() -> None:
    assert known_settings._nccl() is not None  # the table keys on it: None would silence every entry
