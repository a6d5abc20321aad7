"""A CPU Inductor kernel linked against a libstdc++ of its own is found in the Inductor cache and named: real shared
objects built by the real g++, one linked as usual and one with -static-libstdc++ (what the H100 host's toolchain did
to Inductor's kernels, evidence/shipped-stack), read by the real readelf; a real SIGSEGV in a real probe child."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from conformance.support.processes.background import CPU_COMPILE_KEY, BackgroundProbe, cpu_compile_result
from conformance.support.processes.kernel_linkage import (
    carries_libstdcxx,
    inductor_cache_dir,
    static_libstdcxx_finding,
    static_libstdcxx_kernels,
)

SOURCE = '#include <sstream>\nextern "C" unsigned long parse(const char* t) {\n' \
    "    std::istringstream s(t); unsigned long v = 0; s >> v; return v; }\n"  # fmt: skip

pytestmark = pytest.mark.skipif(
    shutil.which("g++") is None or shutil.which("readelf") is None, reason="needs g++ and binutils' readelf"
)


def _kernel(folder: Path, name: str, *flags: str) -> Path:
    source = folder / f"{name}.cpp"
    source.write_text(SOURCE)
    library = folder / f"{name}.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-O2", *flags, str(source), "-o", str(library)], check=True)
    return library


def test_a_kernel_with_its_own_libstdcxx_is_told_from_one_that_loads_the_shared_one(tmp_path: Path) -> None:
    readelf = str(shutil.which("readelf"))
    assert not carries_libstdcxx(_kernel(tmp_path, "shared"), readelf)
    assert carries_libstdcxx(_kernel(tmp_path, "static", "-static-libstdc++"), readelf)
    found, read = static_libstdcxx_kernels(tmp_path)
    assert ([path.name for path in found], read) == (["static.so"], 2)


def test_the_finding_names_the_cache_the_kernel_and_the_upstream_fix(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "ab").mkdir(parents=True)
    _kernel(cache / "ab", "cabc.main")
    assert static_libstdcxx_finding({"TORCHINDUCTOR_CACHE_DIR": str(cache)}) is None
    _kernel(cache / "ab", "cdef.main", "-static-libstdc++")
    finding = static_libstdcxx_finding({"TORCHINDUCTOR_CACHE_DIR": str(cache)})
    assert finding is not None
    assert finding.startswith(f"1 of the 2 C++ kernels in the Inductor cache {cache} carry a libstdc++ of their own")
    assert "cdef.main.so" in finding
    assert finding.endswith("(fixed upstream in torch 2.10, pytorch/pytorch#170012)")
    assert "\n" not in finding  # a not-judged reason is one line
    assert static_libstdcxx_finding({"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "none")}) is None


def test_the_default_cache_is_inductors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "some:one")
    monkeypatch.setenv("LOGNAME", "some:one")
    assert inductor_cache_dir({"TORCHINDUCTOR_CACHE_DIR": "/x"}) == Path("/x")
    assert inductor_cache_dir({}).name == "torchinductor_some_one"


def _probe_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> dict[str, object]:
    """The CPU-compile result of a probe running `body`, its Inductor cache holding a kernel with its own
    libstdc++."""
    cache = tmp_path / "cache"
    cache.mkdir()
    _kernel(cache, "ckernel.main", "-static-libstdc++")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache))
    script = tmp_path / "probe.py"
    script.write_text(body)
    config = SimpleNamespace(stash=pytest.Stash())
    config.stash[CPU_COMPILE_KEY] = BackgroundProbe(script)
    return cpu_compile_result(cast(pytest.Config, config))


def test_a_probe_killed_by_such_a_kernel_is_named_by_the_crash_then_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe process dies of a real SIGSEGV (as torch 2.9.1's kernel call did); the cause comes from the cache
    that process used, read after its death."""
    result = _probe_result(tmp_path, monkeypatch, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    assert str(result["error"]).startswith("probe.py died of SIGSEGV (exit -11)")
    assert "ckernel.main.so" in str(result["kernel_linkage"])


def test_a_probe_that_fails_otherwise_gets_no_linkage_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _probe_result(tmp_path, monkeypatch, "import sys\nsys.exit(3)\n")
    assert str(result["error"]).startswith("probe.py exited 3")
    assert "kernel_linkage" not in result
