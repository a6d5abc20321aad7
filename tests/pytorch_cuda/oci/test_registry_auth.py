"""Every registry call of a release carries docker login's credentials: a private repository on a registry that
answers 401 with a Bearer challenge (as GHCR does) is read with the credentials of $DOCKER_CONFIG/config.json,
from its `auths` or from a credential helper (`credHelpers`, docker-credential-<name> on PATH)."""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pytorch_cuda.oci.registry_client import RegistryAccessError, RegistryClient

USER, SECRET, TOKEN = "robot", "s3cret", "token-for-robot"
MANIFEST = b'{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{},"layers":[]}'


class PrivateRegistry(BaseHTTPRequestHandler):
    """/token hands a token for the right basic credentials; /v2/ paths need that token."""

    seen: list[str] = []  # noqa: RUF012 (the test reads what the server saw)

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        auth = self.headers.get("Authorization", "")
        self.seen.append(f"{self.path.split('?')[0]} {auth.split(' ')[0]}")
        if self.path.startswith("/token"):
            expected = "Basic " + base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
            if auth == expected:
                self._send(200, json.dumps({"token": TOKEN}).encode(), {"Content-Type": "application/json"})
            else:
                self._send(401, b"{}", {})
            return
        if auth != f"Bearer {TOKEN}":
            host = self.headers["Host"]
            challenge = f'Bearer realm="http://{host}/token",service="{host}",scope="repository:o/private:pull"'
            self._send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', {"Www-Authenticate": challenge})
            return
        self._send(200, MANIFEST, {"Content-Type": "application/vnd.oci.image.manifest.v1+json"})


@pytest.fixture
def registry() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), PrivateRegistry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    PrivateRegistry.seen = []
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def read(host: str) -> bytes | None:
    found = RegistryClient(host).manifest(f"{host}/o/private:v1")
    return found.raw if found else None


def test_a_credential_helper_s_credentials_reach_a_private_registry(
    registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    helper = tmp_path / "bin" / "docker-credential-fake"
    helper.parent.mkdir()
    answer = json.dumps({"Username": USER, "Secret": SECRET})
    helper.write_text(f"#!/bin/sh\nread host\necho '{answer}'\n")
    helper.chmod(0o755)
    (tmp_path / "config.json").write_text(json.dumps({"credHelpers": {registry: "fake"}}))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    monkeypatch.setenv("PATH", f"{helper.parent}:{os.environ['PATH']}")
    assert read(registry) == MANIFEST
    assert "/token Basic" in PrivateRegistry.seen  # the helper's credentials bought the token


def test_docker_login_s_auths_reach_a_private_registry(
    registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
    (tmp_path / "config.json").write_text(json.dumps({"auths": {registry: {"auth": auth}}}))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    assert read(registry) == MANIFEST


def test_without_credentials_the_private_registry_refuses(
    registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.docker/config.json either
    with pytest.raises(RegistryAccessError, match=r"did not answer .* Cannot respond to request for authentication"):
        read(registry)
