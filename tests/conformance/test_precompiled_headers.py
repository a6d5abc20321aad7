"""The compile probe keeps Inductor's precompiled C++ headers in TORCHINDUCTOR_CACHE_DIR (the build's check volume)
when it is set, and leaves torch's own folder alone otherwise."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from torch._inductor import codecache

from conformance.support.probes.cpu_compile_probe import keep_precompiled_headers_in_cache_dir


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Whatever a test does to the two folders is undone after it."""
    monkeypatch.setattr(codecache, "_HEADER_DIR", codecache._HEADER_DIR)
    monkeypatch.setattr(codecache, "_HEADER_LOCK_DIR", codecache._HEADER_LOCK_DIR)
    return monkeypatch


def test_with_a_cache_dir_the_headers_go_into_it(restored: pytest.MonkeyPatch, tmp_path: Path) -> None:
    restored.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    folder = keep_precompiled_headers_in_cache_dir()
    assert folder == str(tmp_path / "precompiled_headers")
    assert folder == codecache._HEADER_DIR
    assert str(tmp_path / "precompiled_headers" / "locks") == codecache._HEADER_LOCK_DIR


def test_without_one_torchs_folder_stays(restored: pytest.MonkeyPatch) -> None:
    restored.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    before = codecache._HEADER_DIR
    assert keep_precompiled_headers_in_cache_dir() is None
    assert before == codecache._HEADER_DIR


def test_a_torch_without_those_folders_keeps_its_own(restored: pytest.MonkeyPatch, tmp_path: Path) -> None:
    restored.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    restored.delattr(codecache, "_HEADER_LOCK_DIR")
    assert keep_precompiled_headers_in_cache_dir() is None


def test_inductor_reads_the_folders_when_it_compiles_a_header() -> None:
    """The module globals are read per call (not bound when torch is imported), so moving them takes effect."""
    source = inspect.getsource(codecache._precompile_header)
    assert "_HEADER_DIR" in source
    assert "_HEADER_LOCK_DIR" in source
