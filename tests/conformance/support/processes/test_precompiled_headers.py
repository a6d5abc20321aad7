"""The compile probe keeps Inductor's precompiled C++ headers in TORCHINDUCTOR_CACHE_DIR (the build's check volume)
when it is set, and leaves torch's own folder alone otherwise."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from torch._inductor import codecache

from conformance.support.processes.cpu_compile_probe import keep_precompiled_headers_in_cache_dir


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Whatever a test does to the two folders is undone after it."""
    monkeypatch.setattr(codecache, "_HEADER_DIR", codecache._HEADER_DIR)
    monkeypatch.setattr(codecache, "_HEADER_LOCK_DIR", codecache._HEADER_LOCK_DIR)
    return monkeypatch


def test_with_a_cache_dir_the_headers_go_into_it(restored: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = keep_precompiled_headers_in_cache_dir(str(tmp_path))
    assert folder == str(tmp_path / "precompiled_headers")
    assert folder == codecache._HEADER_DIR
    assert str(tmp_path / "precompiled_headers" / "locks") == codecache._HEADER_LOCK_DIR


def test_without_one_torchs_folder_stays(restored: pytest.MonkeyPatch) -> None:
    before = codecache._HEADER_DIR
    assert keep_precompiled_headers_in_cache_dir(None) is None
    assert before == codecache._HEADER_DIR


def test_a_torch_without_those_folders_keeps_its_own(restored: pytest.MonkeyPatch, tmp_path: Path) -> None:
    restored.delattr(codecache, "_HEADER_LOCK_DIR")
    assert keep_precompiled_headers_in_cache_dir(str(tmp_path)) is None


# The probe's main() in a new interpreter without TORCHINDUCTOR_CACHE_DIR: its vector-ISA pick asks Inductor for its
# cache folder (which fills the variable in), and its compile is replaced by a failure, to keep the test short.
PROBE_WITHOUT_A_CACHE_DIR = """
import json, sys, types
from conformance.support.processes import cpu_compile_probe  # standard library only: torch is not imported yet

def pick():
    from torch._inductor.runtime.cache_dir_utils import cache_dir
    cache_dir()  # what torch's own pick does first
    return None, 0

def no_compile(*args, **kwargs):
    raise RuntimeError("not compiled in this test")

stand_in = types.ModuleType("conformance.support.workloads.compile_check")
stand_in.PointwiseNet, stand_in.compile_and_compare, stand_in.has_cpp_kernel = object, no_compile, None
sys.modules[stand_in.__name__] = stand_in
cpu_compile_probe.pick_vec_isa_forked = pick
assert "torch" not in sys.modules
sys.exit(cpu_compile_probe.main())
"""


def test_the_probe_reads_the_variable_before_inductor_fills_it_in() -> None:
    """Without TORCHINDUCTOR_CACHE_DIR the probe keeps torch's folder (null), though Inductor has set the variable
    to its default folder by the time the probe moves the headers."""
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    probe = subprocess.run(
        [sys.executable, "-c", PROBE_WITHOUT_A_CACHE_DIR], capture_output=True, text=True, env=env, timeout=300
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    result = json.loads(probe.stdout.strip().splitlines()[-1])
    assert result["precompiled_headers"] is None, result
    assert "not compiled in this test" in result["error"], result


def test_inductor_reads_the_folders_when_it_compiles_a_header() -> None:
    """The module globals are read per call (not bound when torch is imported), so moving them takes effect."""
    source = inspect.getsource(codecache._precompile_header)
    assert "_HEADER_DIR" in source
    assert "_HEADER_LOCK_DIR" in source
