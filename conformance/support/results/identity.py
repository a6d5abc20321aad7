"""What identifies a run: the suite's own digest, the image (digest, revision, ref), the stack it ran on, and a
writable JSON path."""

from __future__ import annotations

import hashlib
import os
import socket
import sys
from pathlib import Path
from typing import Final

from conformance.support import SUITE_SOURCE
from pytorch_cuda_contract import paths
from pytorch_cuda_contract.carried_stack import RunStack, read_run_stack
from pytorch_cuda_contract.manifest import ManifestLookup
from pytorch_cuda_contract.suite_digest import suite_tree_digest

IMAGE_DIGEST_ENV: Final = "PYTORCH_CUDA_IMAGE_DIGEST"
IMAGE_REF_ENV: Final = "PYTORCH_CUDA_IMAGE_REF"
HOST_ENV: Final = "PYTORCH_CUDA_HOST"  # the nightly sets it to the runner's name (a container's hostname is its id)


def suite_digest() -> str | None:
    """The contract's suite digest of this suite's folder (every file, as the build's check memo and the GPU job's
    content hash take it), None if unreadable."""
    try:
        return f"sha256:{suite_tree_digest(SUITE_SOURCE)}"
    except OSError:
        return None


def host_identity() -> dict[str, object]:
    """The host the run saw, hashed (the published history keeps no host names): $PYTORCH_CUDA_HOST when set,
    else the hostname (in a container, the container's own unless it runs with --uts=host or --hostname)."""
    named = os.environ.get(HOST_ENV, "").strip()
    name, source = (named, HOST_ENV) if named else (socket.gethostname(), "hostname")
    return {"sha256": hashlib.sha256(name.encode()).hexdigest()[:16], "source": source}


def find_run_stack(prefix: str | None = None, manifest_path: str = paths.MANIFEST_PATH) -> RunStack:
    """The stack this run is on: image (the in-image manifest exists, whatever the venv holds), carried (the
    shipped stack's marker is in the interpreter's prefix) or host. A marker that cannot be read gives host, with
    its error (the suite fails the run with it)."""
    return read_run_stack(sys.prefix if prefix is None else prefix, manifest_path)


def image_identity(manifest: ManifestLookup) -> dict[str, object]:
    raw = manifest.manifest.raw if manifest.manifest is not None else {}
    revision = raw.get("revision") or raw.get("manifest_revision")
    return {
        "digest": os.environ.get(IMAGE_DIGEST_ENV) or None,
        "revision": str(revision) if revision else None,
        "ref": os.environ.get(IMAGE_REF_ENV) or None,
    }


def check_writable(path: Path) -> str | None:
    """Why ``--conformance-json PATH`` cannot be written (checked before any test runs), else None."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        probe = path.with_name(path.name + f".{os.getpid()}.probe")
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        return (
            f"--conformance-json {path}: cannot write there ({exc}). Pass a writable path; the image's "
            "`conformance` command writes to $CONFORMANCE_OUT (default /tmp/conformance). Exit status 4."
        )
    return None
