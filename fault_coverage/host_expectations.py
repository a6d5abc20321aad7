"""The bare host's expectations file: what a platform team pins for a GPU host, passed to the suite with
``--manifest FILE`` (the manifest format; see pytorch_cuda_contract/manifest.py), so that the pin checks run.

It is read from the host itself (the versions installed now), so the untouched run meets it; a fault changes
some of its fields (``Injection.expectations``: ``pins.torch``, ``python``, ``min_driver``, ...), modelling an
environment that drifted from what was pinned, as the image's broken variants do with its manifest.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

READ_HOST: Final = """
import json, sys
from importlib import metadata
import torch

def wheel(library):
    for suffix in ("cu13", "cu12", "cu11"):
        name = f"nvidia-{library}-{suffix}"
        try:
            return name, metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None, None

cudnn, nccl = wheel("cudnn"), wheel("nccl")
try:
    triton = metadata.version("triton")
except metadata.PackageNotFoundError:
    triton = None
print(json.dumps({
    "schema": 1, "project": "pytorch-cuda", "target": "bare-host", "flavour": "runtime",
    "python": f"{sys.version_info.major}.{sys.version_info.minor}", "venv": sys.prefix,
    "pins": {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": cudnn[1], "nccl": nccl[1],
             "triton": triton},
    "wheels": {name: wheel_name for name, (wheel_name, _) in (("cudnn", cudnn), ("nccl", nccl)) if wheel_name},
    "min_driver": None, "cuda_compat_driver": None,
}))
"""


class ExpectationsError(RuntimeError):
    """The host's versions cannot be read (no torch for this python)."""


def read_host(python: str) -> dict[str, Any]:
    finished = subprocess.run([python, "-c", READ_HOST], capture_output=True, text=True, timeout=120, check=False)
    if finished.returncode != 0:
        raise ExpectationsError(f"cannot read the host's versions with {python}: {finished.stderr.strip()[-500:]}")
    document: dict[str, Any] = json.loads(finished.stdout)
    return document


def drifted(document: Mapping[str, Any], changes: Mapping[str, str]) -> dict[str, Any]:
    """The document with ``changes`` applied: ``pins.torch`` sets a pin, ``python`` a top-level field."""
    changed: dict[str, Any] = json.loads(json.dumps(document))
    for key, value in changes.items():
        section, _, name = key.rpartition(".")
        (changed[section] if section else changed)[name] = value
    return changed


def write(document: Mapping[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    path.chmod(0o644)
    return path
