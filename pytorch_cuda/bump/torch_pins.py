"""What a torch wheel pins exactly: triton and the nvidia-* cuDNN and NCCL wheels, from its core metadata.

torch X+cu128 requires `nvidia-cudnn-cu12==9.10.2.21` and the like, so a torch bump moves those matrix pins
with it; the index serves a wheel's METADATA beside it (PEP 658), or its bytes are read by range (remote_wheel), so no
900 MB wheel is downloaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from packaging.metadata import Metadata
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from pytorch_cuda.bump.resolver import supported_tags
from pytorch_cuda.errors import EngineError
from pytorch_cuda.locks.file_format import normalise
from pytorch_cuda.package_index.remote_wheel import wheel_metadata
from pytorch_cuda.package_index.simple_index import IndexFile, fetch_url


def _environment(python: str) -> dict[str, str]:
    return {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "sys_platform": "linux",
        "os_name": "posix",
        "platform_python_implementation": "CPython",
        "implementation_name": "cpython",
        "extra": "",
    }


def wheel_for(files: Iterable[IndexFile], version: str, python: str, local: str | None) -> IndexFile | None:
    """An installable, not yanked wheel of torch `version` (with the target's local label), one with a
    PEP 658 metadata file first."""
    wanted = Version(f"{version}+{local}" if local else version)
    found = [
        file
        for file in files
        if not file.yanked
        and file.filename.endswith(".whl")
        and parse_wheel_filename(file.filename)[1] == wanted
        and parse_wheel_filename(file.filename)[3] & supported_tags(python)
    ]
    return max(found, key=lambda file: file.has_metadata, default=None)


def exact_pins(metadata_text: str, python: str) -> dict[str, str]:
    """Each Requires-Dist that applies on Linux x86_64 and pins one version with ==: name -> version."""
    metadata = Metadata.from_email(metadata_text, validate=False)
    pins: dict[str, str] = {}
    for requirement in metadata.requires_dist or []:
        if requirement.marker is not None and not requirement.marker.evaluate(_environment(python)):
            continue
        specs = list(requirement.specifier)
        if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
            pins[normalise(requirement.name)] = specs[0].version
    return pins


def torch_pins(
    files: Iterable[IndexFile], version: str, *, python: str, local: str | None, wheel_family: str, ca: Path | None
) -> dict[str, str]:
    """The matrix's triton, cudnn and nccl pins for torch `version`: key -> version."""
    wheel = wheel_for(files, version, python, local)
    if wheel is None:
        raise EngineError(
            cause=f"the index has no cp{python.replace('.', '')} manylinux x86_64 wheel of torch {version}, so "
            "the triton, cuDNN and NCCL versions it pins cannot be read",
            fix="set targets.*.torch, triton, cudnn and nccl by hand from that wheel's METADATA, or hold torch "
            "back with `policy: {torch: pinned}`",
        )
    text = fetch_url(wheel.url + ".metadata", ca)[1] if wheel.has_metadata else wheel_metadata(wheel.url, ca)
    pins = exact_pins(text, python)
    names = {"triton": "triton", "cudnn": f"nvidia-cudnn-{wheel_family}", "nccl": f"nvidia-nccl-{wheel_family}"}
    missing = [name for name in names.values() if name not in pins]
    if missing:
        raise EngineError(
            cause=f"torch {version}'s metadata ({wheel.filename}) pins no exact {', '.join(missing)}",
            fix="check the target's wheel_family against that wheel, or set its pins by hand",
        )
    return {key: pins[name] for key, name in names.items()}
