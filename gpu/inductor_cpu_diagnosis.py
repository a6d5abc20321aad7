"""Why the CPU Inductor probe dies on a GPU host, round two (issue 50): each suspect tried in a child process with a
timeout, on the Python that runs this script (the carried stack by default, see gpu/inductor-cpu-diagnosis.sh).

Round one (evidence/shipped-stack/h100-2026-12-07/inductor-diagnosis.json) put the SIGSEGV in the call of the
generated kernel module, after compile, and ruled out the fork, the cache, the precompiled header, vectorisation,
threads and the compiler path.  torch 2.9.1's kernel binding reads the address of the function it calls on every
tensor argument from the environment (_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR) with a std::istringstream and does
not check the parse (upstream pytorch/pytorch#170012 replaced it after a parse that gave 0 and a segfault later).
Round two asks:
- where the fault is (gpu/diagnosis/segv_report.c, preloaded: the instruction pointer, the return address at the
  stack top, the objects they fall in; gdb's backtrace where the host has gdb);
- whether that parse works at each stage of a process (gpu/diagnosis/binding_parse.cpp, built with the compiler
  Inductor uses: before torch, after import, after CUDA init, after Triton's driver, at each kernel load);
- whether it happens with no GPU visible, and under the C locale;
- the generated kernel source, kept in $OUT for reading.
Prints one line per experiment and writes JSON to argv[1].
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "diagnosis"
PROBE = ROOT / "conformance" / "support" / "processes" / "cpu_compile_probe.py"

STAGES = HERE / "stages.py"  # the parse at each stage, printed as it goes ("STAGE name: json")


def run(name: str, argv: list[str], env: dict[str, str], results: dict[str, object], timeout: int = 240) -> None:
    started = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)
        rc: int | str = done.returncode
        out, err = done.stdout.strip(), done.stderr.strip()
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    stages = [line for line in out.splitlines() if line.startswith("STAGE ")]
    last = "\n".join(stages) if stages else (out.splitlines()[-1] if out else "")
    seconds = round(time.monotonic() - started, 1)
    report = [line for line in err.splitlines() if line.startswith("segv-report")]
    kept = err if len(err) <= 5000 else err[:3500] + "\n[...]\n" + err[-1500:]
    results[name] = {"rc": rc, "s": seconds, "stdout": last[-4000:], "segv_report": report, "stderr": kept}
    print(f"== {name}: rc {rc} in {seconds} s\n   {last[:1500]}\n   {report}\n   {err[-600:]}", flush=True)


def build(work: Path, results: dict[str, object]) -> tuple[Path | None, Path | None]:
    """segv_report.so with gcc; binding_parse with the compiler Inductor uses, as it builds a kernel (C++17, -O3,
    -march=native, the new C++ ABI, Python's headers)."""
    cxx = os.environ.get("CXX", "g++")
    ext = work / ("binding_parse" + str(sysconfig.get_config_var("EXT_SUFFIX")))
    segv = work / "segv_report.so"
    commands = {
        "segv_report": ["gcc", "-shared", "-fPIC", "-O2", "-o", str(segv), str(HERE / "segv_report.c")],
        "binding_parse": [cxx, "-shared", "-fPIC", "-O3", "-march=native", "-std=c++17",
                          "-D_GLIBCXX_USE_CXX11_ABI=1", f"-I{sysconfig.get_path('include')}", "-o", str(ext),
                          str(HERE / "binding_parse.cpp")],
    }  # fmt: skip
    built: dict[str, object] = {}
    for name, argv in commands.items():
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        built[name] = {"rc": done.returncode, "stderr": done.stderr[-800:]}
    results["build"] = built
    print("build", built, flush=True)
    return (segv if segv.exists() else None), (ext if ext.exists() else None)


def main() -> int:
    out_path = Path(sys.argv[1])
    py = sys.executable
    base = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR")}
    results: dict[str, object] = {"python": py, "gdb": shutil.which("gdb")}
    results["locale_env"] = {k: v for k, v in os.environ.items() if k.startswith(("LC_", "LANG"))}
    work = Path(tempfile.mkdtemp(prefix="ind-diag-"))
    segv, ext = build(work, results)
    preload = {"LD_PRELOAD": str(segv)} if segv else {}
    cache = Path(tempfile.mkdtemp(prefix="ind-stages-"))
    if ext:
        stages = [py, str(STAGES), str(ext)]
        run("stages", stages, {**base, **preload, "TORCHINDUCTOR_CACHE_DIR": str(cache)}, results)
        no_gpu = {**base, **preload, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(), "CUDA_VISIBLE_DEVICES": ""}
        run("stages-no-gpu-visible", stages, no_gpu, results)
        c_locale = {**base, **preload, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(), "LC_ALL": "C",
                    "PYTHONCOERCECLOCALE": "0"}  # fmt: skip
        run("stages-c-locale", stages, c_locale, results)
        if shutil.which("gdb"):
            gdb = ["gdb", "-q", "-batch", "-ex", "run", "-ex", "bt 12", "-ex", "info registers rip", "--args", *stages]
            run("stages-gdb", gdb, {**base, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp()}, results)
    fresh = {**base, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp()}
    run("probe-fresh-cache", [py, "-X", "faulthandler", str(PROBE)], fresh, results, timeout=120)
    no_gpu_probe = {**base, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(), "CUDA_VISIBLE_DEVICES": ""}
    run("probe-no-gpu-visible", [py, "-X", "faulthandler", str(PROBE)], no_gpu_probe, results, timeout=120)
    kept = out_path.parent / "inductor-kernels"
    kept.mkdir(parents=True, exist_ok=True)
    for source in sorted(cache.rglob("*.cpp"))[:6]:
        shutil.copy(source, kept / source.name)
    out_path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
