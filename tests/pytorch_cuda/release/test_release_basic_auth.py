"""A registry with Basic auth (docker-registry with an htpasswd file, as a self-hosted registry is often run) on a
loopback port of its own: sign and verify work with docker login's credentials ($DOCKER_CONFIG/config.json's
`auths`); without them both fail at once naming the missing Basic credentials, not a "did not answer" DNS error
(oras-py's token backend took the Basic realm for a token URL)."""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import subprocess
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.support.release_checkout import folded, make_checkout
from tests.support.throwaway_registry import free_port
from tests.support.tiny_images import unique_repository

with warnings.catch_warnings():  # crypt: bcrypt ($2b$, libxcrypt) for htpasswd, no new dependency; 3.11-3.12 only
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt

pytestmark = pytest.mark.integration

USER, SECRET = "robot", "s3cret-for-robot"


@pytest.fixture
def htpasswd_registry(tmp_path: Path) -> Iterator[str]:
    if shutil.which("docker-registry") is None:
        pytest.fail("docker-registry is not installed: scripts/setup-registry.sh installs it")
    port = free_port()
    (tmp_path / "htpasswd").write_text(f"{USER}:{crypt.crypt(SECRET, crypt.mksalt(crypt.METHOD_BLOWFISH))}\n")
    (tmp_path / "config.yml").write_text(
        f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {tmp_path / 'data'}\nhttp:\n"
        f"  addr: 127.0.0.1:{port}\nauth:\n  htpasswd:\n    realm: basic-realm\n    path: {tmp_path / 'htpasswd'}\n"
    )
    log = (tmp_path / "registry.log").open("w")
    server = subprocess.Popen(["docker-registry", "serve", str(tmp_path / "config.yml")], stdout=log, stderr=log)
    host = f"127.0.0.1:{port}"
    try:
        for _ in range(50):
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"http://{host}/v2/", timeout=1).status_code == 401:
                    break
            time.sleep(0.1)
        yield host
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


def test_sign_and_verify_work_on_an_htpasswd_registry_with_docker_login_s_credentials(
    htpasswd_registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, repository = htpasswd_registry, f"{htpasswd_registry}/ci/pytorch-cuda"
    checkout = make_checkout(tmp_path / "checkout", repository)  # its base on the loopback registry, no auth
    scratch = unique_repository()
    built = checkout.candidate("v1", "a" * 40, scratch)
    for tag in ("candidate", "v1"):
        copied = subprocess.run(
            ["skopeo", "copy", "--preserve-digests", "--src-tls-verify=false", "--dest-tls-verify=false",
             "--dest-creds", f"{USER}:{SECRET}", f"docker://{scratch}@{built}", f"docker://{repository}:{tag}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert copied.returncode == 0, copied.stderr
    (tmp_path / "nobody").mkdir()
    (tmp_path / "nobody" / "config.json").write_text("{}")
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "nobody"))
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    text = folded(checkout.release("verify", f"{repository}:v1").stderr)
    assert f"the registry {host} asks for Basic credentials (htpasswd) and docker's configuration has none" in text
    auth = base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
    (tmp_path / "login").mkdir()
    (tmp_path / "login" / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "login"))
    checkout.sign(f"{repository}@{built}", "release", "v1")
    verified = checkout.release("verify", f"{repository}:v1")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.rstrip().endswith(f"pull {repository}@{built}")
