"""Turn a case's injection into the command prefix, environment and working folder of one suite run, and start and
stop what it needs alongside (a busy GPU). Everything it makes lives in a temporary folder removed afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from fault_coverage.case_model import DETERMINISTIC_WORKSPACE, Injection
from fault_coverage.host_expectations import drifted, write

SUITE_TREES: Final = ("conformance", "pytorch_cuda_contract")  # what the suite imports from the checkout
DETERMINISTIC_START: Final = "import torch\n\ntorch.use_deterministic_algorithms(True)\n"  # before the patch, if any
BUSY_GPU_SCRIPT: Final = """
import sys, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    a @ a
torch.cuda.synchronize()
print("ready", flush=True)
while True:
    for _ in range(20):
        a @ a
    torch.cuda.synchronize()
"""


class InjectionError(RuntimeError):
    """A case cannot be set up on this host (a library that is not there, a tool that is missing)."""


@dataclass(frozen=True)
class Prepared:
    prefix: tuple[str, ...]  # what runs the suite's command (setpriv, unshare), empty for none
    env: dict[str, str]
    cwd: Path  # where `python -m pytest conformance` runs
    results_dir: Path  # a folder the suite's user can write its results file into
    manifest: Path | None  # the host's expectations file (as the case changes it), for --manifest


def find_torch_libraries(pattern: str) -> list[Path]:
    """CUDA libraries shipped in torch's wheels (site-packages/nvidia/.../lib/PATTERN), for copies to be made of."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    for root in roots:
        found = sorted(p for p in root.rglob(pattern) if p.is_file() and "lib" in p.parent.name)
        if found:
            return found
    raise InjectionError(f"no {pattern} under torch's nvidia wheels ({[str(r) for r in roots] or 'none installed'})")


def find_host_library(soname: str, listing: str | None = None) -> Path:
    """The host's own copy of a CUDA library (``ldconfig -p``'s entry for ``soname``, outside torch's wheels): a
    distribution's libcudnn9 or libnccl2 package, a CUDA toolkit. ``listing``: ldconfig's output (for tests)."""
    if listing is None:
        try:
            listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30, check=False).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            raise InjectionError(f"cannot list the loader cache (ldconfig -p): {exc}") from exc
    for line in listing.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ", 1)[0] == soname:
            found = Path(path.strip())
            if "site-packages" not in found.parts and found.exists():
                return found
    raise InjectionError(f"the host has no {soname} of its own (outside torch's wheels) in `ldconfig -p`")


def _copy_libraries(pattern: str, scratch: Path) -> Path:
    """Copies of every library matching ``pattern`` in one folder (a library and its companions: cuBLAS and
    cuBLASLt), as a toolkit's folder holds them; returns the first copy."""
    folder = scratch / "foreign-lib"
    folder.mkdir(exist_ok=True)
    copies = []
    for source in find_torch_libraries(pattern):
        shutil.copy2(source, folder / source.name)
        copies.append(folder / source.name)
    return copies[0]


def _suite_copy(root: Path, scratch: Path) -> Path:
    """A world-readable copy of the suite for another uid (the checkout may sit under a folder only root enters)."""
    tree = scratch / "suite"
    for name in SUITE_TREES:
        shutil.copytree(root / name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [tree, *tree.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    scratch.chmod(0o755)
    return tree


def _environment(injection: Injection, scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(injection.env)
    body = []  # the sitecustomize's parts, in order
    if injection.deterministic:
        body.append(DETERMINISTIC_START)
        env["CUBLAS_WORKSPACE_CONFIG"] = DETERMINISTIC_WORKSPACE
    patch = injection.patch_file()
    if patch is not None:
        if not patch.is_file():
            raise InjectionError(f"the patch {patch} does not exist")
        body.append(patch.read_text(encoding="utf-8"))
    if body:
        site = scratch / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text("\n".join(body), encoding="utf-8")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH", "")]))
    if injection.preload_copy:
        env["LD_PRELOAD"] = str(_copy_libraries(injection.preload_copy, scratch))
    if injection.preload_host:
        env["LD_PRELOAD"] = str(find_host_library(injection.preload_host))
    folder = None
    if injection.library_path_copy:
        folder = _copy_libraries(injection.library_path_copy, scratch).parent
    if injection.library_path_host:
        folder = find_host_library(injection.library_path_host).parent
    if folder is not None:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(folder), env.get("LD_LIBRARY_PATH", "")]))
    return env


def _mount_script(injection: Injection) -> str | None:
    return None if injection.shm_mib is None else f"mount -t tmpfs -o size={injection.shm_mib}m tmpfs /dev/shm"


def _prefix(injection: Injection) -> tuple[str, ...]:
    prefix: tuple[str, ...] = ()
    script = _mount_script(injection)
    if (script is not None or injection.uid is not None) and os.geteuid() != 0:
        raise InjectionError(f"a private mount namespace and another uid need root; this is uid {os.geteuid()}")
    if script is not None:
        if shutil.which("unshare") is None:
            raise InjectionError("a private mount namespace needs unshare (util-linux)")
        prefix += ("unshare", "-m", "sh", "-ec", f'{script}\nexec "$@"', "sh")
    if injection.uid is not None:
        if shutil.which("setpriv") is None:
            raise InjectionError("running as another uid needs setpriv (util-linux) and root")
        prefix += ("setpriv", f"--reuid={injection.uid}", f"--regid={injection.uid}", "--clear-groups")
    return prefix


@contextmanager
def busy_gpu(python: str) -> Iterator[None]:
    """Another process keeping the GPU busy with bf16 GEMMs until the block ends (as a shared node would)."""
    process = subprocess.Popen([python, "-c", BUSY_GPU_SCRIPT], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        if line.strip() != "ready":
            raise InjectionError(f"the GPU-busy process did not start (exit {process.poll()})")
        yield
    finally:
        process.kill()
        process.wait(timeout=30)


@contextmanager
def prepared(injection: Injection, root: Path, host: Mapping[str, Any] | None = None) -> Iterator[Prepared]:
    """The case set up in a temporary folder; ``host`` is the host's expectations file (expectations.read_host)."""
    with tempfile.TemporaryDirectory(prefix="fault-") as name:
        scratch = Path(name)
        results = scratch / "results"
        results.mkdir()
        results.chmod(0o1777)
        env = _environment(injection, scratch)
        cwd = root
        if injection.uid is not None:  # a uid with no passwd entry, set up as the image's entry point does it
            cwd = _suite_copy(root, scratch)
            home = scratch / "home"
            home.mkdir(mode=0o777)
            home.chmod(0o777)
            user = f"uid-{injection.uid}"
            env.update({"HOME": str(home), "USER": user, "LOGNAME": user, "PYTHONDONTWRITEBYTECODE": "1"})
        manifest = None
        if host is not None:
            manifest = write(drifted(host, injection.expectations), scratch / "expectations.json")
        elif injection.expectations:
            raise InjectionError("changed expectations need the host's expectations file")
        prepared_case = Prepared(_prefix(injection), env, cwd, results, manifest)
        if injection.busy_gpu:
            with busy_gpu(sys.executable):
                yield prepared_case
        else:
            yield prepared_case
