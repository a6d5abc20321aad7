"""`docker run` through the CLI, for what the SDK does not do simply: a TTY, and signals to a running command."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

DOCKER = "/usr/bin/docker" if Path("/usr/bin/docker").exists() else "docker"


@dataclass(frozen=True)
class Ran:
    code: int
    output: str  # stdout and stderr together, as a user sees them


def docker_run(image: str, *command: str, options: tuple[str, ...] = (), timeout_s: float = 300) -> Ran:
    result = subprocess.run(
        [DOCKER, "run", "--rm", *options, image, *command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout_s,
    )
    return Ran(result.returncode, result.stdout.replace("\r\n", "\n"))


def docker(*args: str, timeout_s: float = 120) -> str:
    result = subprocess.run([DOCKER, *args], capture_output=True, text=True, timeout=timeout_s, check=True)
    return result.stdout.strip()
