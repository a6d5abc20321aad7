"""Why a CPU Inductor kernel can kill the process that calls it: a kernel linked with a libstdc++ of its own.

torch 2.9's C++ kernel binding (torch/_inductor/codecache.py, CppPythonBindingsCodeCache) reads the address of the
function it calls on every tensor argument from the environment with a std::istringstream, and does not check the
parse.  When the host's toolchain links that kernel against a static libstdc++ (a libstdc++.a found before the
shared one on the link line), the kernel carries a second copy of libstdc++ whose exported symbols the process's
shared copy, loaded by torch, partly takes over: the stream's locale facets come from one copy and are looked up in
the other, the parse fails, the address is 0, and the first call of the kernel jumps to it (SIGSEGV).  Seen on an
H100 host (Ubuntu 24.04, g++ 13.3 with the shared libstdc++ of gcc 14) with the shipped stack carried there
(evidence/shipped-stack).  torch 2.10 parses with strtoull and checks it (pytorch/pytorch#170012).

This module finds such kernels in an Inductor cache with binutils' readelf, which every host that compiles C++
has: a shared object that defines std::locale::classic() itself and does not load libstdc++.so.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

# std::locale::classic(), defined in libstdc++ only: a kernel that defines it carries libstdc++ inside
LIBSTDCXX_SYMBOL: Final = "_ZNSt6locale7classicEv"
MAX_KERNELS: Final = 400  # a cache holds tens of kernels per suite run; the newest are read first
UPSTREAM: Final = "pytorch/pytorch#170012"


def inductor_cache_dir(env: Mapping[str, str]) -> Path:
    """The folder Inductor caches its kernels in for a process started with `env`: TORCHINDUCTOR_CACHE_DIR, else
    its default, /tmp/torchinductor_<user> (torch._inductor.runtime.cache_dir_utils.default_cache_dir)."""
    chosen = env.get("TORCHINDUCTOR_CACHE_DIR")
    if chosen:
        return Path(chosen)
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return Path(tempfile.gettempdir()) / ("torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))


def carries_libstdcxx(library: Path, readelf: str) -> bool:
    """Whether `library` defines libstdc++'s own std::locale::classic() without loading libstdc++.so."""
    done = subprocess.run(
        [readelf, "-dW", "--dyn-syms", str(library)], capture_output=True, text=True, timeout=30, check=False
    )
    if done.returncode != 0:
        return False
    needs_shared = re.search(r"\(NEEDED\).*\[libstdc\+\+\.so", done.stdout) is not None
    defines = any(
        line.split()[-1] == LIBSTDCXX_SYMBOL and " UND " not in line
        for line in done.stdout.splitlines()
        if LIBSTDCXX_SYMBOL in line
    )
    return defines and not needs_shared


def static_libstdcxx_kernels(cache: Path) -> tuple[list[Path], int]:
    """The kernels in `cache` that carry a libstdc++ of their own, and how many kernels were read (newest first,
    at most MAX_KERNELS); ([], 0) without readelf or a cache."""
    readelf = shutil.which("readelf")
    if readelf is None or not cache.is_dir():
        return [], 0
    kernels = sorted(cache.rglob("*.so"), key=lambda path: path.stat().st_mtime, reverse=True)[:MAX_KERNELS]
    return [kernel for kernel in kernels if carries_libstdcxx(kernel, readelf)], len(kernels)


def static_libstdcxx_finding(env: Mapping[str, str] | None = None) -> str | None:
    """One line naming the cause when the Inductor cache of a process started with `env` (this one's by default)
    holds kernels linked against a libstdc++ of their own; None when it holds none (or cannot be read)."""
    cache = inductor_cache_dir(os.environ if env is None else env)
    found, read = static_libstdcxx_kernels(cache)
    if not found:
        return None
    return (
        f"{len(found)} of the {read} C++ kernels in the Inductor cache {cache} carry a libstdc++ of their own "
        f"(e.g. {found[0].name}: it defines {LIBSTDCXX_SYMBOL} and does not load libstdc++.so), so the C++ "
        "toolchain links Inductor's kernels against a static libstdc++ beside the shared one torch loads; torch "
        "2.9's kernel binding then parses its function address as 0 and the first kernel call jumps to it "
        f"(fixed upstream in torch 2.10, {UPSTREAM})"
    )
