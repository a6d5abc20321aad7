"""A docker-registry of a test's own (Debian's, which scripts/setup-registry.sh installs), on a free loopback port,
its configuration and storage in the test's folder: for what the shared registry on 127.0.0.1:5000 cannot be (one
with Basic auth, one whose storage the test removes after)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def docker_registry(folder: Path, storage: Path, *, auth: str = "", ready: int = 200) -> Iterator[str]:
    """docker-registry serving `storage` on a free loopback port while the block runs, with `auth` (a YAML block
    under `auth:`, if any); its `HOST:PORT` once /v2/ answers `ready`. Its log is `folder`/registry.log."""
    if shutil.which("docker-registry") is None:
        pytest.fail("docker-registry is not installed: scripts/setup-registry.sh installs it")
    host = f"127.0.0.1:{free_port()}"
    config = folder / "registry.yml"
    config.write_text(
        f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {storage}\nhttp:\n  addr: {host}\n"
        + (f"auth:\n{auth}" if auth else "")
    )
    with (folder / "registry.log").open("w") as log:
        server = subprocess.Popen(["docker-registry", "serve", str(config)], stdout=log, stderr=log)
        try:
            for _ in range(100):
                with contextlib.suppress(requests.RequestException):
                    if requests.get(f"http://{host}/v2/", timeout=1).status_code == ready:
                        break
                time.sleep(0.1)
            yield host
        finally:
            server.terminate()
            server.wait(timeout=30)
