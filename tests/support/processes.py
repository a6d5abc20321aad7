"""Processes under a pid, from /proc: to find build.py's build client (`docker build`) and kill it."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone meanwhile
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])  # the name in parentheses may hold spaces


def children(pid: int) -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and _parent(int(entry)) == pid]


def descendants(pid: int) -> list[int]:
    found = children(pid)
    return found + [grandchild for child in found for grandchild in descendants(child)]


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def kill_build_client(build_py: int) -> list[str]:
    """SIGKILL build.py's build client (`docker build`, or `docker buildx build` and its plugin) and return its
    command line. Exactly one child of build.py runs a build."""
    clients = [pid for pid in children(build_py) if "build" in cmdline(pid)]
    assert len(clients) == 1, {pid: cmdline(pid) for pid in children(build_py)}
    client = clients[0]
    argv = cmdline(client)
    for pid in [client, *descendants(client)]:  # buildx: the plugin below the CLI holds the daemon connection
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return argv
