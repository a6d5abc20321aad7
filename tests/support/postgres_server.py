"""A throwaway PostgreSQL server for the PostgreSQL backend's tests: Debian's `postgresql` (scripts/setup-postgres.sh
installs it), a cluster made by initdb in a temporary folder and started by pg_ctl on a free loopback port, as a
user that is not root (the server refuses root: the tests run as `postgres` then, through setpriv). Each test gets a
database of its own on it; the server is stopped and its folder removed when the session ends."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

SETUP = "run scripts/setup-postgres.sh (it installs Debian's postgresql)"
SUPERUSER = "pytorch_cuda"


@dataclass(frozen=True)
class PostgresServer:
    port: int
    folder: Path

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A new, empty database on the server: its URI."""
        import psycopg

        name = f"store_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.dsn(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.dsn(name)


def server_binary(name: str) -> str:
    """initdb or pg_ctl: on PATH, else in Debian's versioned folder (/usr/lib/postgresql/<major>/bin)."""
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if found is None:
        pytest.fail(f"PostgreSQL's {name} is not installed: {SETUP}")
    return found


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", *argv]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_server() -> Iterator[PostgresServer]:
    folder = Path(tempfile.mkdtemp(prefix="pytorch-cuda-postgres-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data, log = folder / "data", folder / "server.log"
    initdb = [server_binary("initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8",
              "--locale=C.UTF-8", "--no-sync"]  # fmt: skip
    made = subprocess.run(_as_server_user(initdb), capture_output=True, text=True)
    if made.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"initdb failed ({made.returncode}): {made.stderr.strip()[-800:]}")
    pg_ctl = server_binary("pg_ctl")
    port = _free_port()
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50"
    start = [pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "60", "start"]
    started = subprocess.run(_as_server_user(start), capture_output=True, text=True)
    try:
        if started.returncode != 0:
            server_log = log.read_text(errors="replace")[-800:] if log.exists() else ""
            pytest.fail(f"pg_ctl start failed ({started.returncode}): {started.stderr.strip()} {server_log}")
        yield PostgresServer(port, folder)
    finally:
        stop = [pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]
        subprocess.run(_as_server_user(stop), capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)
