"""Pick the client that runs BuildKit builds: `docker buildx build`, else `DOCKER_BUILDKIT=1 docker build`."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from pytorch_cuda.engine.protocol import EngineBuild
from pytorch_cuda.errors import EngineError

CANDIDATE_CLIENTS = ("docker", "/usr/bin/docker", "/usr/local/bin/docker")
# Clients from 23.0 on route `docker build` through buildx and refuse BuildKit without it: a workaround picks the client
# by version (https://github.com/moby/moby/releases/tag/v23.0.0, docker/cli#3314).
LAST_CLIENT_WITH_BUILTIN_BUILDKIT = 22


DOCKER_BUILD_NO_CACHE_EXPORT = (
    "the build client is `docker build` of Docker 20.10 (DOCKER_BUILDKIT=1), which cannot export BuildKit cache to a "
    "registry (--cache-to needs buildx with a docker-container builder), so the build used the local cache only; the "
    "push still sends only the layers the registry lacks"
)
BUILDX_DOCKER_DRIVER_NO_CACHE_EXPORT = (
    "buildx's builder uses the 'docker' driver, which cannot export cache to a registry, so the build used the local "
    "cache only; `docker buildx create --driver docker-container --use` makes a builder that can"
)


@dataclass(frozen=True)
class BuildClient:
    name: str  # "buildx" or "docker-build"
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    # None when this client exports and imports BuildKit cache to a registry; otherwise why it cannot.
    registry_cache_gap: str | None = DOCKER_BUILD_NO_CACHE_EXPORT

    def command(self, request: EngineBuild) -> list[str]:
        argv = [*self.argv, "--progress=plain", "-f", str(request.dockerfile), "-t", request.tag]
        for key, value in sorted(request.labels.items()):
            argv += ["--label", f"{key}={value}"]
        for key, value in sorted(request.build_args.items()):
            argv += ["--build-arg", f"{key}={value}"]
        for secret_id, path in sorted(request.secrets.items()):
            argv += ["--secret", f"id={secret_id},src={path}"]
        if request.no_cache:
            argv.append("--no-cache")
        if self.registry_cache_gap is None:
            argv += [arg for ref in request.cache_from for arg in ("--cache-from", f"type=registry,ref={ref}")]
            argv += [arg for ref in request.cache_to for arg in ("--cache-to", f"type=registry,ref={ref},mode=max")]
        argv.append(str(request.context))
        return argv


def _unique_executables() -> list[str]:
    seen: dict[str, str] = {}
    for candidate in CANDIDATE_CLIENTS:
        found = shutil.which(candidate)
        if found:
            seen.setdefault(str(Path(found).resolve()), found)
    return list(seen.values())


def _has_buildx(executable: str) -> bool:
    try:
        result = subprocess.run([executable, "buildx", "version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def buildx_driver(executable: str) -> str | None:
    """The driver of buildx's current builder ("docker", "docker-container", ...), when it says."""
    try:
        result = subprocess.run([executable, "buildx", "inspect"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"^Driver:\s*(\S+)", result.stdout, re.MULTILINE)
    return match.group(1) if match else None


def client_major_version(executable: str) -> int | None:
    try:
        result = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"version (\d+)\.", result.stdout)
    return int(match.group(1)) if match else None


def find_build_client() -> BuildClient:
    executables = _unique_executables()
    for executable in executables:
        if _has_buildx(executable):
            gap = None if buildx_driver(executable) not in (None, "docker") else BUILDX_DOCKER_DRIVER_NO_CACHE_EXPORT
            return BuildClient("buildx", (executable, "buildx", "build", "--load"), registry_cache_gap=gap)
    for executable in executables:
        major = client_major_version(executable)
        if major is not None and major <= LAST_CLIENT_WITH_BUILTIN_BUILDKIT:
            return BuildClient(
                "docker-build",
                (executable, "build"),
                {"DOCKER_BUILDKIT": "1"},
                registry_cache_gap=DOCKER_BUILD_NO_CACHE_EXPORT,
            )
    found = ", ".join(executables) or "none on PATH"
    raise EngineError(
        cause=f"no Docker client here can run a BuildKit build (clients found: {found}; none has the buildx "
        "plugin, and clients from 23.0 on need it)",
        fix="install the buildx plugin (package docker-buildx-plugin or docker-buildx), or Debian's docker.io whose "
        "20.10 client builds with DOCKER_BUILDKIT=1 (`sudo scripts/setup-docker.sh` installs it)",
    )
