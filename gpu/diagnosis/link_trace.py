"""Which libstdc++ the linker takes for an Inductor CPU kernel on this host: each of Inductor's compile commands is
printed, and each one that links a shared object is run again with the linker's trace (-Wl,-t) into a scratch
file, keeping the lines about libstdc++; each -L folder of the command is listed for libstdc++ files.  Then the
compiled function is called (it may die: the lines before say why).  Run with the stack's Python."""

import glob
import os
import shlex
import subprocess
import tempfile

import torch
from torch._inductor import cpp_builder

real_run = cpp_builder._run_compile_cmd


def traced(cmd_line: str, cwd: str) -> None:
    print("COMMAND", cmd_line[:300], "...", cmd_line[-400:], flush=True)
    real_run(cmd_line, cwd)
    argv = shlex.split(cmd_line)
    if "-shared" not in argv or "-o" not in argv:
        return
    argv[argv.index("-o") + 1] = os.path.join(tempfile.mkdtemp(), "trace.so")
    done = subprocess.run([*argv, "-Wl,-t"], capture_output=True, text=True, cwd=cwd, check=False)
    picked = sorted({line.strip() for line in (done.stdout + done.stderr).splitlines() if "stdc++" in line})
    print("LINKER TOOK", picked, flush=True)
    for folder in [arg[2:] for arg in argv if arg.startswith("-L")]:
        print("LIBDIR", folder, sorted(glob.glob(os.path.join(folder, "libstdc++*"))), flush=True)


cpp_builder._run_compile_cmd = traced
print(
    "g++ finds",
    subprocess.run(["g++", "-print-file-name=libstdc++.so"], capture_output=True, text=True).stdout,
    subprocess.run(["g++", "-print-file-name=libstdc++.a"], capture_output=True, text=True).stdout,
    flush=True,
)
compiled = torch.compile(lambda x: (x.sin() + 1.0) * 2.0)
print("CALL", float(compiled(torch.randn(64)).sum()), flush=True)
