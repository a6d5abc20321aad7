"""A host cache for the in-image checks' Inductor work: its CPU ISA probe programs and compiled kernels.

What Inductor compiles for the CPU checks depends on the host CPU and the torch version, not on the
image's other content, so each rebuild used to compile the same small C++ programs again. They go
into a named Docker volume (only the engine's users can write it, so nothing else can poison it),
named after both: a new CPU or a new torch gets a new, empty volume and starts cold. Inductor's own
keys cover the rest (compiler version, flags, source). The volume is mounted on an empty directory
the image makes for it (owned by the image's user, so a new volume takes that owner).
"""

from __future__ import annotations

import hashlib
import platform
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytorch_cuda_contract import paths

MOUNT_POINT: Final = paths.INDUCTOR_CACHE_DIR
CACHE_ENV: Final = "TORCHINDUCTOR_CACHE_DIR"
VOLUME_PREFIX: Final = "pytorch-cuda-inductor"
_CPU_FIELDS: Final = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags")


@dataclass(frozen=True)
class InductorCache:
    volume: str  # the named volume on the engine
    mount_point: str = MOUNT_POINT

    @property
    def environment(self) -> dict[str, str]:
        return {CACHE_ENV: self.mount_point}


def cpu_key(cpuinfo: str, machine: str) -> str:
    """12 hex digits naming a CPU: the first processor's identity and ISA flags in /proc/cpuinfo, and the arch."""
    first = cpuinfo.split("\n\n", 1)[0]
    fields = {}
    for line in first.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() in _CPU_FIELDS:
            fields[name.strip()] = " ".join(sorted(value.split())) if name.strip() == "flags" else value.strip()
    text = machine + "\n" + "\n".join(f"{k}={fields.get(k, '')}" for k in _CPU_FIELDS)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def volume_name(torch_version: str, cpu: str) -> str:
    """e.g. pytorch-cuda-inductor-torch2.9.1-cu128-3f2a...; Docker allows [a-zA-Z0-9][a-zA-Z0-9_.-]."""
    safe = re.sub(r"[^a-zA-Z0-9_.-]", "-", torch_version)
    return f"{VOLUME_PREFIX}-torch{safe}-cpu{cpu}"


def host_cache(torch_version: str, cpuinfo_path: Path = Path("/proc/cpuinfo")) -> InductorCache:
    """The cache for this host's CPU (the engine is local) and this torch."""
    try:
        cpuinfo = cpuinfo_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        cpuinfo = ""  # not Linux: the arch alone names the CPU; Inductor's own keys still hold
    return InductorCache(volume_name(torch_version, cpu_key(cpuinfo, platform.machine())))
