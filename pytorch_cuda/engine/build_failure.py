"""Explain a failed build from its log: one paragraph with the cause and the fix."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.engine.buildkit_log import bound_lock, short_step
from pytorch_cuda.engine.client_failure import killed_client, lost_connection
from pytorch_cuda.errors import EngineError


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    cause: str
    fix: str


_PATTERNS = (
    _Pattern(
        re.compile(r"No space left on device|no space left on device"),
        "the disk under the Docker engine filled up during the build",
        "free space: `docker image prune -f`, `docker builder prune -f` (a CUDA image needs about 8 GB free "
        "plus the build cache), then build again",
    ),
    _Pattern(
        re.compile(r"CERTIFICATE_VERIFY_FAILED|SSLError|certificate verify failed"),
        "pip inside the build could not verify the package index's TLS certificate",
        "pass the CA bundle that your proxy or network needs with --ca-bundle PATH (or PIP_CERT / SSL_CERT_FILE / "
        "REQUESTS_CA_BUNDLE); it goes in as a BuildKit secret and never lands in a layer",
    ),
    _Pattern(
        re.compile(
            r"(?:Could not find a version that satisfies the requirement|No matching distribution found for) (\S+)"
        ),
        "the package index has no wheel for the pinned requirement {0}",
        "check the pin in matrix.yaml against the index of that target (a torch build for this Python version "
        "and platform must exist there), re-render with `python build.py render`, then build again",
    ),
    _Pattern(
        re.compile(
            r"(Failed to establish a new connection|Temporary failure in name resolution|Max retries exceeded|"
            r"Network is unreachable|Connection reset by peer|Read timed out|ReadTimeoutError|"
            r"Could not fetch URL|IncompleteRead)"
        ),
        "a download inside the build failed ({0})",
        "check that the package index and the Debian archive are reachable from the Docker engine (proxy settings, "
        "DNS), then build again; finished downloads stay in the build cache",
    ),
    _Pattern(
        re.compile(r"(Unable to fetch some archives|Failed to fetch \S+|E: Unable to locate package \S+)"),
        "apt inside the build failed: {0}",
        "check that the Debian archive named in the base image's sources is reachable and that the package "
        "names in matrix.yaml exist in that Debian release",
    ),
    _Pattern(
        re.compile(r"(pull access denied|failed to resolve source metadata for \S+|not found: manifest unknown)"),
        "the build could not get its base image ({0})",
        "run the build through `python build.py`, which bootstraps the base image offline when it cannot be pulled",
    ),
)


_UV_HASH_MISMATCH = re.compile(r"Hash mismatch for `([^`]+)`")
# pip: "THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. ..." then "    uv==0.13.9 from https://...:"
_PIP_HASH_MISMATCH = re.compile(r"THESE PACKAGES DO NOT MATCH THE HASHES[^\n]*\n(?:#\d+ [\d.]+ )?\s*(\S+) from ")


def explain_build_failure(
    log_text: str,
    log_path: Path | None,
    failed_step: str,
    *,
    exit_code: int = 1,
    client: str = "docker build",
    running_step: str = "",
) -> EngineError:
    """The cause and fix of a build whose client exited with ``exit_code``, from the tail of its log."""
    where = f"; the full log is {log_path}" if log_path else ""
    step = short_step(failed_step or running_step)
    found = (
        killed_client(exit_code, client, step, where)
        # A lost daemon connection fails no step: the client stops hearing from BuildKit, so no "#N ERROR".
        or (None if failed_step else lost_connection(log_text, client, step, where))
        or hash_mismatch(log_text, failed_step, where)
    )
    if found is not None:
        return found
    for pattern in _PATTERNS:
        match = pattern.regex.search(log_text)
        if match:
            detail = match.group(1) if match.groups() else match.group(0)
            return EngineError(cause=pattern.cause.format(detail) + where, fix=pattern.fix)
    last_lines = [line for line in log_text.splitlines() if line.strip()][-3:]
    tail = " / ".join(line.strip()[:200] for line in last_lines)
    at_step = f" at step {step}" if failed_step else ""
    return EngineError(
        cause=f"the image build failed{at_step}: {tail}{where}",
        fix="read the error above, correct the template or matrix entry it points to, re-render, and build again",
    )


# The lock a failed step installs from as its caller names it: (the lock file the step mounts, or None) -> (the lock
# to name, the command that re-resolves it). The engine knows no lock file names; the pipeline hands in the locks
# room's naming (HashMismatchError.naming_locks).
LockNaming = Callable[[str | None], tuple[str, str]]


def lock_as_mounted(bound: str | None) -> tuple[str, str]:
    """Without the locks room: the lock file as the step mounts it, and `build.py lock`."""
    return bound or "the lock", "python build.py lock"


def _mismatch(package: str, bound: str | None, where: str, naming: LockNaming) -> tuple[str, str]:
    lock, relock = naming(bound)
    return (
        f"the download of {package} inside the build does not match its hash in {lock} (the build installs with "
        f"--require-hashes, so nothing was installed or tagged){where}",
        f"if the lock was edited or merged by hand, restore it (`git checkout images/`) or re-resolve it with "
        f"`{relock}` (it takes the hashes from the index and re-renders the layer slices) and review the diff; if "
        "the lock is right, the index, or a proxy or mirror in between, serves other bytes for that version "
        "(truncated, substituted or tampered with): fix or purge that mirror, then build again; never drop the hash",
    )


class HashMismatchError(EngineError):
    """uv or pip refused a download whose bytes do not hash to any of the lock's hashes for it: the package, and
    the lock file the failed step mounts (None when the step mounts none)."""

    def __init__(self, package: str, bound: str | None, where: str) -> None:
        super().__init__(*_mismatch(package, bound, where, lock_as_mounted))
        self.package, self.bound, self.where = package, bound, where

    def naming_locks(self, naming: LockNaming) -> EngineError:
        """The same error, its lock and command named by `naming` (the locks room's `installed_lock`)."""
        return EngineError(*_mismatch(self.package, self.bound, self.where, naming))


def hash_mismatch(log_text: str, failed_step: str, where: str) -> HashMismatchError | None:
    """uv or pip refused a download whose bytes do not hash to any of the lock's hashes for it, or None."""
    match = _UV_HASH_MISMATCH.search(log_text) or _PIP_HASH_MISMATCH.search(log_text)
    if match is None:
        return None
    return HashMismatchError(match.group(1), bound_lock(failed_step), where)
