"""Which CUDA libraries a process mapped, and what could shadow them.

Pure functions over text (``/proc/self/maps``, ``ldconfig -p``) and directory
listings, so they can be unit tested without a GPU.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

# Library families that must be loaded exactly once.  Patterns match the main
# library file name, e.g. libcublas.so.12, libcudnn.so.9, libnccl.so.2.
LIBRARY_FAMILIES: Final[dict[str, re.Pattern[str]]] = {
    "cublas": re.compile(r"^libcublas\.so(\.\d+)*$"),
    "cublasLt": re.compile(r"^libcublasLt\.so(\.\d+)*$"),
    "cudnn": re.compile(r"^libcudnn\.so(\.\d+)*$"),
    "nccl": re.compile(r"^libnccl\.so(\.\d+)*$"),
}
# Any file of these libraries (cuDNN 9 has sub-libraries libcudnn_*.so.9).
SHADOWING_LIBRARY: Final = re.compile(r"^lib(cublas|cublasLt|cudnn|nccl)(_[A-Za-z0-9_]+)?\.so")


def parse_proc_maps(text: str) -> list[str]:
    """File paths mapped in a ``/proc/<pid>/maps`` text, in order, without duplicates."""
    seen: dict[str, None] = {}
    for line in text.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 6:
            continue
        path = fields[5].strip()
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        if path.startswith("/"):
            seen.setdefault(path, None)
    return list(seen)


def group_libraries(paths: Iterable[str], resolve: Callable[[str], str] = os.path.realpath) -> dict[str, list[str]]:
    """Family -> sorted distinct resolved paths of the mapped main libraries."""
    found: dict[str, set[str]] = {family: set() for family in LIBRARY_FAMILIES}
    for path in paths:
        name = os.path.basename(path)
        for family, pattern in LIBRARY_FAMILIES.items():
            if pattern.match(name):
                found[family].add(resolve(path))
    return {family: sorted(values) for family, values in found.items()}


def cudnn_directories(paths: Iterable[str], resolve: Callable[[str], str] = os.path.realpath) -> list[str]:
    """Distinct directories that libcudnn* files (main and sub-libraries) were mapped from."""
    dirs = {os.path.dirname(resolve(p)) for p in paths if os.path.basename(p).startswith("libcudnn")}
    return sorted(dirs)


@dataclass(frozen=True)
class ShadowFinding:
    source: str  # "LD_LIBRARY_PATH", "ldconfig" or "default directory"
    location: str
    detail: str

    def __str__(self) -> str:
        return f"{self.source}: {self.location}: {self.detail}"


def is_within(path: str, roots: Iterable[str]) -> bool:
    resolved = os.path.realpath(path)
    for root in roots:
        root_resolved = os.path.realpath(root)
        if resolved == root_resolved or resolved.startswith(root_resolved.rstrip("/") + "/"):
            return True
    return False


def scan_ld_library_path(
    value: str,
    allowed_roots: Iterable[str],
    listdir: Callable[[str], list[str]] = os.listdir,
) -> list[ShadowFinding]:
    """Entries of LD_LIBRARY_PATH that could shadow the expected CUDA libraries.

    A ``stubs`` directory (the link-time libcuda stub) is always wrong at run
    time.  A directory holding libcublas/libcudnn/libnccl files outside
    ``allowed_roots`` would be searched before the wheels' RUNPATH.
    """
    roots = list(allowed_roots)
    findings: list[ShadowFinding] = []
    for entry in value.split(":"):
        if not entry:
            continue
        if "stubs" in Path(entry).parts:
            findings.append(
                ShadowFinding("LD_LIBRARY_PATH", entry, "CUDA stubs directory (stub libcuda.so hides the driver)")
            )
            continue
        try:
            names = sorted(listdir(entry))
        except OSError:
            continue
        libraries = [name for name in names if SHADOWING_LIBRARY.match(name)]
        if libraries and not is_within(entry, roots):
            findings.append(ShadowFinding("LD_LIBRARY_PATH", entry, "contains " + ", ".join(libraries[:6])))
    return findings


_LDCONFIG_LINE: Final = re.compile(r"^\s*(\S+)\s+\((?P<flags>[^)]*)\)\s+=>\s+(?P<path>\S.*)$")


def parse_ldconfig(text: str) -> list[tuple[str, str]]:
    """(soname, path) pairs from ``ldconfig -p`` output."""
    pairs = []
    for line in text.splitlines():
        match = _LDCONFIG_LINE.match(line)
        if match:
            pairs.append((match.group(1), match.group("path").strip()))
    return pairs


def scan_ldconfig(pairs: Iterable[tuple[str, str]], allowed_roots: Iterable[str]) -> list[ShadowFinding]:
    """ldconfig cache entries for cuBLAS/cuDNN/NCCL outside ``allowed_roots``."""
    roots = list(allowed_roots)
    findings = []
    for soname, path in pairs:
        if SHADOWING_LIBRARY.match(soname) and not is_within(path, roots):
            findings.append(ShadowFinding("ldconfig", path, f"second copy of {soname} in the loader cache"))
    return findings


def ldconfig_problem(returncode: int, stdout: str, stderr: str) -> str | None:
    """Why an ``ldconfig -p`` run says nothing about the loader cache (None when its listing can be trusted)."""
    if returncode != 0:
        return f"exited with status {returncode}: {stderr.strip()[-500:] or 'no message on stderr'}"
    if not parse_ldconfig(stdout):
        return f"listed no libraries (stdout {stdout.strip()[:200]!r}, stderr {stderr.strip()[-300:]!r})"
    return None


def default_library_directories(multiarch: str | None) -> tuple[str, ...]:
    """The dynamic loader's trusted directories: dlopen searches them even for files not in the ldconfig cache."""
    plain = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")
    arch = (f"/lib/{multiarch}", f"/usr/lib/{multiarch}") if multiarch else ()
    return (*arch, *plain)


def scan_default_directories(
    directories: Iterable[str],
    allowed_roots: Iterable[str],
    known: Iterable[str] = (),
    listdir: Callable[[str], list[str]] = os.listdir,
    resolve: Callable[[str], str] = os.path.realpath,
) -> list[ShadowFinding]:
    """cuBLAS/cuDNN/NCCL files in the loader's default directories that ``known`` (the cache's findings) misses.

    A copy placed there without running ldconfig is absent from ``ldconfig -p`` but still found by dlopen.
    Directories that resolve to the same place (``/lib`` -> ``/usr/lib`` on merged-/usr systems) count once.
    """
    roots = list(allowed_roots)
    seen = {resolve(path) for path in known}
    findings = []
    scanned: set[str] = set()
    for directory in directories:
        real = resolve(directory)
        if real in scanned:
            continue
        scanned.add(real)
        try:
            names = sorted(listdir(directory))
        except OSError:
            continue
        for name in names:
            path = os.path.join(directory, name)
            if not SHADOWING_LIBRARY.match(name) or resolve(path) in seen or is_within(path, roots):
                continue
            seen.add(resolve(path))
            findings.append(ShadowFinding("default directory", path, f"{name}, found by dlopen without the cache"))
    return findings


def expected_library_root(
    venv: str | None, python: str | None, torch_file: str, carried_root: str | None = None
) -> str:
    """Where pip wheels put the NVIDIA libraries: ``<site-packages>/nvidia``.

    On the shipped stack carried to a bare host it is the carried venv's (``carried_root``: the image's venv path
    is not there); with a manifest venv it is ``<venv>/lib/python<X.Y>/site-packages/nvidia``; otherwise the
    ``nvidia`` folder beside the imported torch package.
    """
    if carried_root is not None:
        return carried_root
    if venv is not None and python is not None:
        return os.path.join(venv, "lib", f"python{python}", "site-packages", "nvidia")
    return str(Path(torch_file).resolve().parent.parent / "nvidia")


def libraries_outside(groups: Mapping[str, list[str]], root: str) -> list[str]:
    return [path for paths in groups.values() for path in paths if not is_within(path, [root])]
