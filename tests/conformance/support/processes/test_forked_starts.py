"""The suite's forked starts: Inductor's vector-ISA load check done by fork in the compile probe, and the
background gloo ranks forked only when that is safe. Each must still fail where torch's own way fails."""

from __future__ import annotations

import ctypes.util
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conformance.support.processes import spawn as spawn_module
from conformance.support.processes.cpu_compile_probe import ForkedLoadCheck, pick_vec_isa_forked

LOADER = '\nimport torch\nfrom ctypes import cdll\ncdll.LoadLibrary("__lib_path__")\n'


def _command(path: str) -> list[str]:
    return [sys.executable, "-c", LOADER.replace("__lib_path__", path)]


def test_a_loadable_library_passes_in_a_forked_child() -> None:
    libc = ctypes.util.find_library("c")
    assert libc is not None
    shim = ForkedLoadCheck(LOADER)
    assert shim.check_call(_command(libc), stderr=subprocess.DEVNULL) == 0
    assert shim.run(_command(libc), check=True).returncode == 0
    assert shim.forked == 2


def test_a_library_that_does_not_load_fails_like_torchs_subprocess(tmp_path: Path) -> None:
    broken = tmp_path / "broken.so"
    broken.write_bytes(b"not an ELF file")
    shim = ForkedLoadCheck(LOADER)
    with pytest.raises(subprocess.CalledProcessError):
        shim.check_call(_command(str(broken)))
    with pytest.raises(subprocess.CalledProcessError):
        shim.run(_command(str(broken)), check=True)
    assert shim.run(_command(str(broken))).returncode != 0
    assert shim.forked == 3


def test_any_other_command_goes_to_the_real_subprocess() -> None:
    shim = ForkedLoadCheck(LOADER)
    assert shim.library([sys.executable, "-c", "print(1)"]) is None
    assert shim.library(["g++", "-c", LOADER.replace("__lib_path__", "/x.so")]) is None
    with pytest.raises(subprocess.CalledProcessError):
        shim.check_call([sys.executable, "-c", "raise SystemExit(3)"])
    assert shim.forked == 0
    assert shim.DEVNULL == subprocess.DEVNULL  # the rest of the module is the real one


def test_pick_vec_isa_forked_agrees_with_torch() -> None:
    """The same ISA as torch's own check, made in a new process (this one's result is cached by torch)."""
    from torch._inductor import cpu_vec_isa

    isa, forked = pick_vec_isa_forked()
    assert cpu_vec_isa.subprocess is subprocess  # put back
    own = subprocess.run(
        [sys.executable, "-c", "from torch._inductor.cpu_vec_isa import pick_vec_isa; print(pick_vec_isa())"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    assert str(isa) == own.stdout.strip().splitlines()[-1]
    if cpu_vec_isa.valid_vec_isa_list():
        assert forked > 0


def test_gloo_ranks_are_forked_only_when_asked_and_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spawn_module, "gpu_count", lambda: 0)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    assert spawn_module.start_method("gloo", fork=True) == "fork"
    assert spawn_module.start_method("gloo", fork=False) == "spawn"
    assert spawn_module.start_method("nccl", fork=True) == "spawn"
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    assert spawn_module.start_method("gloo", fork=True) == "spawn"
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(spawn_module, "gpu_count", lambda: 8)
    assert spawn_module.start_method("gloo", fork=True) == "spawn"
