"""Hash-locked requirements: read, write, check and slice `images/<variant>/requirements.lock`.

The lock is what `uv pip compile --generate-hashes` resolves from a variant's requirements.txt
on exactly one index, under a header that records that index and a digest of its input, so that
`render --check` can tell a stale lock from a fresh one without the network. The image installs
it in layers (the nvidia-* wheels, then torch and triton, then the small packages), each from a
slice of the lock, so that a small pin bump rebuilds and re-ships only the last slice.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

UV_VERSION = "0.13.9"
PYTHON_PLATFORM = "x86_64-manylinux_2_28"
LOCK_NAME = "requirements.lock"
# A child flavour's lock: only what it adds to its parent's venv (pytorch_cuda/locks/child_flavour.py).
FLAVOUR_LOCK_NAME = "requirements-flavour.lock"
INSTALLER_LOCK = Path("images") / "installer.lock"
# The SBOM generator (cyclonedx-py), for the Dockerfile's sbom stage only: never in the image.
SBOM_TOOL = "cyclonedx-bom"
SBOM_TOOL_VERSION = "7.5.0"
SBOM_TOOL_LOCK = Path("images") / "sbom-tool.lock"
# Build-stage tools, hash-locked from PyPI beside the variants' locks: lock file -> (package, version).
TOOL_LOCKS = {INSTALLER_LOCK: ("uv", UV_VERSION), SBOM_TOOL_LOCK: (SBOM_TOOL, SBOM_TOOL_VERSION)}
PYPI_INDEX = "https://pypi.org/simple"

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
_DIGEST = re.compile(r"^# input: sha256:([0-9a-f]{64})$", re.MULTILINE)
_INDEX = re.compile(r"^--index-url (\S+)$", re.MULTILINE)


@dataclass(frozen=True)
class Layer:
    """One install step of the image: a slice of the lock, a file beside it and a line in the Dockerfile."""

    name: str
    file: str
    what: str


LAYERS = (
    Layer("nvidia", "layer-1-nvidia.lock", "the nvidia-* CUDA wheels (the bulk; they change with the CUDA pin)"),
    Layer("torch", "layer-2-torch.lock", "torch and triton"),
    Layer("python", "layer-3-python.lock", "everything else: small pure-Python packages and numpy"),
)


@dataclass(frozen=True)
class LockEntry:
    name: str  # normalised (PEP 503)
    version: str
    text: str  # the entry's lines as uv wrote them: the pin, its hashes, its "# via" comments


@dataclass(frozen=True)
class LockFile:
    index_url: str | None
    input_digest: str | None
    entries: tuple[LockEntry, ...]

    def versions(self) -> dict[str, str]:
        return {entry.name: entry.version for entry in self.entries}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def input_digest(requirements: str, index_url: str) -> str:
    """What the lock was resolved from: the requirements text and the one index."""
    return hashlib.sha256(f"{index_url}\n{requirements}".encode()).hexdigest()


def compile_argv(uv: str, root: Path, requirements: Path, index_url: str, python: str) -> list[str]:
    """`uv pip compile` of `requirements`, run from `root` (each path in argv absolute): uv names a file in its
    `# via -r` comments relative to the folder it runs in, so a lock says `-r images/cu128-runtime/requirements.txt`
    wherever the checkout is and whatever the working directory (bump's dry run locks a scratch copy, and its diff
    must show the lines the real bump writes; `lock --root DIR` run from elsewhere wrote DIR's absolute path)."""
    return [
        uv,
        "--directory",
        str(root.absolute()),
        "pip",
        "compile",
        "--quiet",
        "--no-config",
        "--no-header",
        "--generate-hashes",
        "--python-version",
        python,
        # The interpreter uv would build an sdist's metadata with: this one. Without it, uv looks on PATH for a
        # Python of the target's version first, and behind pyenv's shims that search alone took 8-11 s per lock.
        "--python",
        sys.executable,
        "--python-platform",
        PYTHON_PLATFORM,
        "--index-url",
        index_url,
        str(requirements.absolute()),
    ]


def parse_lock(text: str) -> LockFile:
    entries: list[LockEntry] = []
    current: list[str] = []
    for line in text.splitlines():
        if _PIN.match(line):
            if current:
                entries.append(_entry(current))
            current = [line]
        elif current and line.startswith((" ", "\t")):
            current.append(line)
        elif current:
            entries.append(_entry(current))
            current = []
    if current:
        entries.append(_entry(current))
    digest = _DIGEST.search(text)
    index = _INDEX.search(text)
    return LockFile(index.group(1) if index else None, digest.group(1) if digest else None, tuple(entries))


def _entry(lines: list[str]) -> LockEntry:
    match = _PIN.match(lines[0])
    assert match is not None
    return LockEntry(normalise(match.group(1)), match.group(2), "\n".join(lines))


def format_lock(body: str, *, index_url: str, digest: str, command: str, requirements: str) -> str:
    """The lock file: a header naming its command, input and index, then uv's entries."""
    entries = parse_lock(body).entries
    return _header(command, requirements, digest) + _join(index_url, entries)


def _header(command: str, requirements: str, digest: str) -> str:
    return (
        f"# Generated by `{command}` (uv {UV_VERSION}, --generate-hashes) from {requirements}.\n"
        "# Do not edit. Installed with --require-hashes: a wheel whose hash is not here fails the build.\n"
        f"# input: sha256:{digest}\n"
    )


def _join(index_url: str, entries: Iterable[LockEntry]) -> str:
    return f"--index-url {index_url}\n" + "".join(entry.text + "\n" for entry in entries)


def layer_of(name: str, small: frozenset[str]) -> str:
    """Which install layer a package goes to; ``small`` are the matrix's own small packages."""
    if name in small:
        return "python"
    if name.startswith("nvidia-"):
        return "nvidia"
    if name in ("torch", "triton"):
        return "torch"
    return "python"


def slice_layers(lock: LockFile, small: Iterable[str]) -> dict[str, str]:
    """Each layer's file name -> its part of the lock (same index, same hashes)."""
    smalls = frozenset(normalise(name) for name in small)
    index = lock.index_url or PYPI_INDEX
    sliced: dict[str, str] = {}
    for layer in LAYERS:
        entries = [entry for entry in lock.entries if layer_of(entry.name, smalls) == layer.name]
        sliced[layer.file] = (
            f"# Generated from {LOCK_NAME} by `python build.py render`: {layer.what}. Do not edit.\n"
            + _join(index, entries)
        )
    return sliced


def diff_versions(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """Lines like 'numpy 2.5.4 -> 2.5.5', '+ pkg 1.0', '- pkg 1.0', in name order."""
    lines: list[str] = []
    for name in sorted(old.keys() | new.keys()):
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        if before is None:
            lines.append(f"+ {name} {after}")
        elif after is None:
            lines.append(f"- {name} {before}")
        else:
            lines.append(f"  {name} {before} -> {after}")
    return lines
