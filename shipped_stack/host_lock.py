"""The host lock: the image's locked versions, resolved for the GPU hosts' Python (3.12) with hashes.

The image runs CPython 3.13 and the GPU hosts have 3.12 only, so the image's own lock cannot be installed there
as it is: this lock pins the same name and version for every package (the image's lock is passed to uv as
constraints) and carries the hashes of every file of each, the cp312 wheels among them. `drift` says how it
differs from the image's lock; a test fails on any difference.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pytorch_cuda.locks.file_format import compile_argv, diff_versions, format_lock, input_digest, parse_lock
from pytorch_cuda.locks.writing import compile_lock, find_uv, run_uv
from shipped_stack.layout import CHECKOUT, HOST_PYTHON, VARIANT, host_lock_path, image_lock_path

COMMAND = "python -m shipped_stack lock"


def _relative(path: Path) -> str:
    return str(path.relative_to(CHECKOUT))


def constraints(image_lock_text: str) -> str:
    """Every pin of the image's lock as a constraint (name==version), so that uv picks the same versions."""
    return "".join(f"{entry.name}=={entry.version}\n" for entry in parse_lock(image_lock_text).entries)


def resolve(variant: str = VARIANT) -> str:
    """The host lock's text, resolved now by uv from the image's requirements with its lock as constraints."""
    image_lock = image_lock_path(variant)
    image = parse_lock(image_lock.read_text(encoding="utf-8"))
    index = image.index_url or "https://pypi.org/simple"
    requirements = image_lock.with_name("requirements.txt")
    with tempfile.TemporaryDirectory(prefix="shipped-stack-lock-") as folder:
        constraint_file = Path(folder) / "constraints.txt"
        constraint_file.write_text(constraints(image_lock.read_text(encoding="utf-8")), encoding="utf-8")
        argv = [*compile_argv(find_uv(), CHECKOUT, requirements, index, HOST_PYTHON), "-c", str(constraint_file)]
        ca = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
        body = compile_lock(argv, Path(ca) if ca else None, run_uv, f"the {HOST_PYTHON} host lock of {variant}")
    digest = input_digest(image_lock.read_text(encoding="utf-8"), index)
    return format_lock(body, index_url=index, digest=digest, command=COMMAND, requirements=_relative(image_lock))


def drift(variant: str = VARIANT) -> list[str]:
    """How the committed host lock's versions differ from the image lock's ('-' image only, '+' host only)."""
    image = parse_lock(image_lock_path(variant).read_text(encoding="utf-8")).versions()
    host = parse_lock(host_lock_path(variant).read_text(encoding="utf-8")).versions()
    return diff_versions(image, host)


def stale(variant: str = VARIANT) -> bool:
    """Whether the host lock was resolved from another image lock than the committed one."""
    image_text = image_lock_path(variant).read_text(encoding="utf-8")
    host = parse_lock(host_lock_path(variant).read_text(encoding="utf-8"))
    index = host.index_url or ""
    return host.input_digest != input_digest(image_text, index)
