"""NVML helpers against a fake pynvml: clocks, power limit, throttle reasons, driver and UUID lookups."""

from __future__ import annotations

import sys
import types

import pytest

from conformance.support.probes import nvml as _nvml


def fake_pynvml() -> types.ModuleType:
    module = types.ModuleType("pynvml")
    handles = {"GPU-abc": "h0"}
    functions: dict[str, object] = {
        "NVML_CLOCK_SM": 1,
        "NVML_CLOCK_MEM": 2,
        "nvmlInit": lambda: None,
        "nvmlSystemGetDriverVersion": lambda: b"580.159.04",
        "nvmlSystemGetCudaDriverVersion": lambda: 13000,
        "nvmlDeviceGetHandleByUUID": lambda uuid: handles[uuid],
        "nvmlDeviceGetHandleByIndex": lambda index: "h0",
        "nvmlDeviceGetUUID": lambda handle: "GPU-abc",
        "nvmlDeviceGetClockInfo": lambda handle, kind: {1: 1980, 2: 3201}[kind],
        "nvmlDeviceGetEnforcedPowerLimit": lambda handle: 700000,
        "nvmlDeviceGetCurrentClocksEventReasons": lambda handle: 0x4 | 0x40,
    }
    for name, function in functions.items():
        setattr(module, name, function)
    return module


@pytest.fixture
def nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml())
    monkeypatch.setattr(_nvml, "_STATE", {})


@pytest.mark.usefixtures("nvml")
def test_clocks_power_and_throttle_reasons() -> None:
    assert _nvml.clocks("abc", 0) == {
        "sm_mhz": 1980,
        "mem_mhz": 3201,
        "power_limit_w": 700.0,
        "throttle_reasons": ["sw_power_cap", "hw_thermal_slowdown"],
    }
    assert _nvml.driver_version() == "580.159.04"
    assert _nvml.cuda_driver_version() == "13.0"
    assert _nvml.device_uuid("abc", 0) == "GPU-abc"
    assert _nvml.clocks("unknown", 0) is None  # a UUID NVML does not know


def test_without_pynvml_everything_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    monkeypatch.setattr(_nvml, "_STATE", {})
    assert _nvml.clocks(None, 0) is None
    assert _nvml.driver_version() is None
    assert _nvml.nvml_error() is not None
