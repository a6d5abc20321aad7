"""Why the CPU Inductor probe dies on a GPU host: each suspect tried on its own, in a child process with a timeout,
on the Python that runs this script (the carried stack by default, see gpu/inductor-cpu-diagnosis.sh).

Suspects: a stale Inductor cache shared with another torch (the default /tmp/torchinductor_<user> is shared by
every torch on the host), the fork after `import torch` (the probe loads each ISA library in a
forked child), two OpenMP runtimes (torch's bundled libgomp against the host compiler's), the host's compiler,
a vector ISA the kernels are built for (AMX, AVX-512), and a CUDA driver in the process (Triton's driver is
loaded in a CPU compile on a GPU host); gdb's backtrace where the host has gdb. Prints one line per experiment
and writes JSON to argv[1].
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "conformance" / "support" / "processes" / "cpu_compile_probe.py"

ISA_EACH = """
import os, sys, ctypes, json, subprocess
import torch
from torch._inductor import cpu_vec_isa
out = {}
for isa in cpu_vec_isa.supported_vec_isa_list:
    name = type(isa).__name__
    try:
        ok = bool(isa)
    except Exception as exc:
        out[name] = f"bool raised {type(exc).__name__}: {exc}"
        continue
    out[name] = f"torch's own check (a new process): {ok}"
print(json.dumps(out))
"""

FORK_EACH = """
import os, sys, ctypes, json, glob, subprocess
import torch
from torch._inductor import cpu_vec_isa
from torch._inductor.codecache import cache_dir
libs = sorted(glob.glob(os.path.join(cache_dir(), "**", "*.so"), recursive=True))
out = {}
for lib in libs:
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            ctypes.cdll.LoadLibrary(lib); code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    forked = os.waitstatus_to_exitcode(status)
    plain = subprocess.run([sys.executable, "-c", f"import torch, ctypes; ctypes.cdll.LoadLibrary({lib!r})"],
                           capture_output=True, text=True)
    out[os.path.relpath(lib, cache_dir())] = {"forked_child": forked, "new_process": plain.returncode,
                                              "stderr": plain.stderr.strip()[-300:]}
print(json.dumps(out))
"""

COMPILE_INLINE = f"""
import sys, json
sys.path.insert(0, {str(ROOT)!r})
import torch
from conformance.support.workloads.compile_check import PointwiseNet, compile_and_compare, has_cpp_kernel
from conformance.support.workloads.numerics import seeded_randn
o = compile_and_compare(PointwiseNet, seeded_randn((16, 32), seed=32), None, backward=False)
print(json.dumps({{"cpp": has_cpp_kernel("\\n".join(o.generated_code)), "errors": o.errors}}))
"""

LIBS = """
import torch, os, glob, json
lib = os.path.join(os.path.dirname(torch.__file__), "lib")
omp = glob.glob(lib + "/*gomp*") + glob.glob(lib + "/*omp*")
print(json.dumps({"torch_lib": sorted(os.path.basename(p) for p in omp),
                  "openmp": torch.backends.openmp.is_available(), "config": torch.__config__.parallel_info()}))
"""


def run(name: str, argv: list[str], env: dict[str, str], results: dict[str, object], timeout: int = 240) -> None:
    started = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)
        rc: int | str = done.returncode
        out, err = done.stdout.strip(), done.stderr.strip()
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    last = out.splitlines()[-1] if out else ""
    seconds = round(time.monotonic() - started, 1)
    # faulthandler's trace: its head holds the fatal error and the innermost frames, its tail the outermost
    kept = err if len(err) <= 5000 else err[:3500] + "\n[...]\n" + err[-1500:]
    results[name] = {"rc": rc, "s": seconds, "stdout": last[-1500:], "stderr": kept}
    print(f"== {name}: rc {rc} in {seconds} s\n   {last[:600]}\n   {err[-900:]}", flush=True)


def main() -> int:
    out_path = Path(sys.argv[1])
    py = sys.executable
    base = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR")}
    results: dict[str, object] = {"python": py}
    default_cache = Path(f"/tmp/torchinductor_{os.environ.get('USER', 'root')}")
    results["default_cache_before"] = (
        sorted(p.name for p in default_cache.iterdir()) if default_cache.exists() else None
    )
    print("default Inductor cache before:", results["default_cache_before"])
    for tool in (["gcc", "--version"], ["ldconfig", "-p"]):
        try:
            text = subprocess.run(tool, capture_output=True, text=True, timeout=30).stdout
        except OSError as exc:
            text = str(exc)
        lines = text.splitlines()
        results[tool[0]] = (
            lines[0] if tool[0] == "gcc" else [line for line in lines if "gomp" in line or "omp5" in line]
        )
        print(tool[0], results[tool[0]])
    results["env"] = {
        k: v for k, v in os.environ.items() if k.startswith(("LD_", "OMP", "KMP", "GOMP", "CUDA", "PYTHON"))
    }
    print("env", results["env"])
    run("libs", [py, "-c", LIBS], base, results)
    fresh = {**base, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="ind-fresh-")}
    run("probe-as-suite-default-cache", [py, "-X", "faulthandler", str(PROBE)], base, results)
    run("probe-fresh-cache", [py, "-X", "faulthandler", str(PROBE)], fresh, results)
    run(
        "isa-torch-own-check-fresh",
        [py, "-X", "faulthandler", "-c", ISA_EACH],
        {**base, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp()},
        results,
    )
    run("forked-vs-new-process-each-lib-default-cache", [py, "-X", "faulthandler", "-c", FORK_EACH], base, results)
    run(
        "compile-inline-fresh",
        [py, "-X", "faulthandler", "-c", COMPILE_INLINE],
        {**base, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp()},
        results,
    )
    no_gpu = {**base, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(), "CUDA_VISIBLE_DEVICES": ""}
    run("compile-inline-no-gpu-visible", [py, "-X", "faulthandler", "-c", COMPILE_INLINE], no_gpu, results)
    if shutil.which("gdb"):
        gdb = ["gdb", "-q", "-batch", "-ex", "run", "-ex", "bt 25", "--args", py, "-c", COMPILE_INLINE]
        run("compile-inline-gdb-backtrace", gdb, {**base, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp()}, results)
    run(
        "compile-inline-avx2",
        [py, "-X", "faulthandler", "-c", COMPILE_INLINE],
        {**base, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(), "ATEN_CPU_CAPABILITY": "avx2"},
        results,
    )
    out_path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
