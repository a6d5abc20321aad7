"""Finding the C compiler the way Triton does, and compiling against Python.h."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

# Triton builds its launcher with $CC, else gcc, else clang; torch's CPU
# Inductor uses a C++ compiler (CXX, g++, clang++).
COMPILER_CANDIDATES = ("gcc", "clang", "cc")


@dataclass(frozen=True)
class CompilerChoice:
    argv: tuple[str, ...]
    origin: str  # "CC" or "PATH"


@dataclass(frozen=True)
class CompilerProblem:
    message: str


def resolve_c_compiler(
    environ: Mapping[str, str], which: Callable[[str], str | None] = shutil.which
) -> CompilerChoice | CompilerProblem:
    cc = environ.get("CC", "").strip()
    if cc:
        argv = shlex.split(cc)
        executable = which(argv[0])
        if executable is None:
            return CompilerProblem(
                f"CC={cc!r} is not an executable compiler (Triton and torch extensions use $CC); "
                "fix CC or unset it and install gcc"
            )
        return CompilerChoice((executable, *argv[1:]), "CC")
    for name in COMPILER_CANDIDATES:
        executable = which(name)
        if executable is not None:
            return CompilerChoice((executable,), "PATH")
    return CompilerProblem(
        f"no C compiler: CC is unset and none of {', '.join(COMPILER_CANDIDATES)} is on "
        f"PATH={environ.get('PATH', '')!r}; Triton (torch.compile on GPU) needs one: install gcc"
    )


PROBE_SOURCE = """#include <Python.h>
int conformance_probe(void) { return PY_MAJOR_VERSION; }
"""


def compile_python_h_probe(
    compiler: CompilerChoice, include_dirs: list[str], workdir: Path, timeout_s: float = 120.0
) -> subprocess.CompletedProcess[str]:
    source = workdir / "probe.c"
    source.write_text(PROBE_SOURCE)
    command = [*compiler.argv, "-c", str(source), "-o", str(workdir / "probe.o")]
    command += [f"-I{d}" for d in include_dirs]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout_s, check=False, env=os.environ.copy()
    )
