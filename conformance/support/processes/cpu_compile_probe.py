"""Subprocess probe: CPU Inductor compile of a pointwise module, vector ISA and OpenMP.

Started in the background when the session begins (a cold C++ compile takes up to a
minute, which then overlaps the GPU checks); prints one JSON object.  Run as a script.

Inductor's vector-ISA check builds a tiny library per ISA (cached in the Inductor cache) and then
loads it in a new `python -c "import torch; cdll.LoadLibrary(...)"` process, so that a library the
CPU cannot load kills a child, not the caller: six such processes (AMX, AVX-512, AVX2), each paying
`import torch`, were 10 of the suite's 19 s with a warm cache. Here each load runs in a child forked
from this process, which has imported torch and never touches CUDA: the same library, loaded in a
process of its own with torch loaded, in milliseconds. Any other command, a torch whose check looks
different, or a child that does not finish in time goes through torch's own subprocess.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

FORKED_LOAD_TIMEOUT_S = 60.0


class ForkedLoadCheck:
    """Stands in for the `subprocess` module of torch._inductor.cpu_vec_isa while pick_vec_isa() runs:
    torch's load check (check_call in torch 2.9, run in later ones) forks; anything else is the real module."""

    def __init__(self, loader_code: str, placeholder: str = "__lib_path__") -> None:
        self._prefix, _, self._suffix = loader_code.partition(placeholder)
        self.forked = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    def library(self, args: Any) -> str | None:
        """The library path when `args` is torch's load check, else None."""
        if not (isinstance(args, list) and len(args) == 3 and args[:2] == [sys.executable, "-c"]):
            return None
        code = str(args[2])
        if not self._suffix or not code.startswith(self._prefix) or not code.endswith(self._suffix):
            return None
        return code[len(self._prefix) : len(code) - len(self._suffix)] or None

    def _forked(self, args: Any) -> int | None:
        path = self.library(args)
        status = None if path is None else _load_in_child(path)
        if status is not None:
            self.forked += 1
        return status  # None: not the load check, or the child hung: torch's own way

    def check_call(self, args: Any, **kwargs: Any) -> int:
        status = self._forked(args)
        if status is None:
            return subprocess.check_call(args, **kwargs)
        if status != 0:
            raise subprocess.CalledProcessError(status, args)
        return 0

    def run(self, args: Any, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
        status = self._forked(args)
        if status is None:
            return subprocess.run(args, **kwargs)  # the caller's own check= is in kwargs
        if status != 0 and kwargs.get("check"):
            raise subprocess.CalledProcessError(status, args)
        return subprocess.CompletedProcess(args, status)


def _load_in_child(path: str) -> int | None:
    """Exit status of a forked child that loads `path`; None when it did not finish in time (it is killed).
    Python 3.12+ warns that this process is multi-threaded (torch's import starts threads): the child only loads
    a library and exits, and one that hangs is killed and the load goes through torch's own subprocess, so the
    warning is silenced rather than shown as the probe's stderr."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"This process .* is multi-threaded", category=DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            ctypes.cdll.LoadLibrary(path)
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + FORKED_LOAD_TIMEOUT_S
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.005)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def pick_vec_isa_forked() -> tuple[object, int]:
    """torch's pick_vec_isa(), its library loads done by fork; and how many loads were forked."""
    from torch._inductor import cpu_vec_isa

    loader = getattr(cpu_vec_isa.VecISA, "_avx_py_load", None)
    real = getattr(cpu_vec_isa, "subprocess", None)
    if not isinstance(loader, str) or real is not subprocess:
        return cpu_vec_isa.pick_vec_isa(), 0
    shim = ForkedLoadCheck(loader)
    setattr(cpu_vec_isa, "subprocess", shim)  # noqa: B010 - a module attribute, whatever its type here
    try:
        return cpu_vec_isa.pick_vec_isa(), shim.forked
    finally:
        setattr(cpu_vec_isa, "subprocess", real)  # noqa: B010


def keep_precompiled_headers_in_cache_dir(root: str | None) -> str | None:
    """Point Inductor's precompiled C++ headers into `root`, the TORCHINDUCTOR_CACHE_DIR the probe was started
    with (read before torch is imported: Inductor sets the variable to its default folder the first time it asks),
    when it was set; the folder, or None.

    Inductor keeps them in default_cache_dir() (/tmp/torchinductor_<user>), outside TORCHINDUCTOR_CACHE_DIR, so
    each new container (every in-build check) compiled the 137 MB header of its C++ kernels again: 4.5 s of this
    probe's 9 s with a warm cache. In the cache directory (the build's check volume) the header is compiled once per
    torch and CPU. The compiler still runs in every probe: Inductor preprocesses the header each time, to key the
    precompiled file by its content (a missing compiler fails the probe, warm cache or not). A torch without these
    module attributes keeps its own folder."""
    if not root:
        return None
    from torch._inductor import codecache

    if not all(isinstance(getattr(codecache, name, None), str) for name in ("_HEADER_DIR", "_HEADER_LOCK_DIR")):
        return None
    folder = os.path.join(root, "precompiled_headers")
    setattr(codecache, "_HEADER_DIR", folder)  # noqa: B010 - module globals _precompile_header reads per call
    setattr(codecache, "_HEADER_LOCK_DIR", os.path.join(folder, "locks"))  # noqa: B010
    return folder


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    cache_root = os.environ.get("TORCHINDUCTOR_CACHE_DIR")  # before torch: Inductor fills it in with its default
    import torch

    from conformance.support.workloads.compile_check import PointwiseNet, compile_and_compare, has_cpp_kernel
    from conformance.support.workloads.numerics import seeded_randn

    result: dict[str, object] = {"openmp": bool(torch.backends.openmp.is_available())}
    try:
        isa, result["vec_isa_forked_loads"] = pick_vec_isa_forked()
        result["vec_isa"] = str(isa) if isa else None
    except Exception as exc:
        result["vec_isa_error"] = f"{type(exc).__name__}: {exc}"
    result["precompiled_headers"] = keep_precompiled_headers_in_cache_dir(cache_root)
    # What is known so far, before the compile: a compile that kills this process leaves the ISA and OpenMP answers
    print(json.dumps({**result, "stage": "vector ISA"}), flush=True)
    try:
        outcome = compile_and_compare(PointwiseNet, seeded_randn((16, 32), seed=32), None, backward=False)
    except Exception as exc:
        lines = traceback.format_exception_only(type(exc), exc)
        result["error"] = "".join(lines).strip()[-3000:]
    else:
        result.update(
            graph_count=outcome.graph_count,
            graph_break_count=outcome.graph_break_count,
            break_reasons=list(outcome.break_reasons),
            code_modules=len(outcome.generated_code),
            has_cpp_kernel=has_cpp_kernel("\n".join(outcome.generated_code)),
            errors=outcome.errors,
            explain_s=outcome.explain_s,
            compile_and_run_s=outcome.compile_and_run_s,
        )
    print(json.dumps({**result, "stage": "done"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
