"""A proxy in front of the Docker engine's unix socket that can cut the connections of one kind of request."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType


def engine_socket() -> Path | None:
    """The unix socket the Docker engine listens on, as the client would find it; None for a tcp/ssh DOCKER_HOST."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    return Path(host.removeprefix("unix://")) if host.startswith("unix://") else None


class SocketProxy:
    """Listens on `path` and relays every connection, byte for byte, to the engine's socket `upstream`.

    Each connection is remembered with the head of the first request its client sent (request line and
    headers: the docker CLI says "User-Agent: Docker-Client/...", the Python SDK "docker-sdk-python/..."),
    so a test can cut the build client's connections and leave build.py's own."""

    def __init__(self, path: Path, upstream: Path) -> None:
        self.path, self.upstream = path, upstream
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(64)
        self._open: list[tuple[str, socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def docker_host(self) -> str:
        return f"unix://{self.path}"

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self._server.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._relay, args=(downstream,), daemon=True).start()

    def _relay(self, downstream: socket.socket) -> None:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(str(self.upstream))
            first = downstream.recv(65536)
            upstream.sendall(first)
        except OSError:
            _close(downstream, upstream)
            return
        with self._lock:
            self._open.append((first.split(b"\r\n\r\n", 1)[0].decode("latin-1"), downstream, upstream))
        threading.Thread(target=_pump, args=(upstream, downstream), daemon=True).start()
        _pump(downstream, upstream)

    def cut(self, which: Callable[[str], bool]) -> list[str]:
        """Drop every open connection whose first request head `which` accepts; return their request lines."""
        with self._lock:
            chosen = [(head, a, b) for head, a, b in self._open if which(head)]
        for _, downstream, upstream in chosen:
            _close(downstream, upstream)
        return [(head.splitlines() or [""])[0] for head, _, _ in chosen]

    def __enter__(self) -> SocketProxy:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._server.close()
        self.cut(lambda _head: True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    _close(source, sink)


def _close(*sockets: socket.socket) -> None:
    for each in sockets:
        with contextlib.suppress(OSError):
            each.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            each.close()
