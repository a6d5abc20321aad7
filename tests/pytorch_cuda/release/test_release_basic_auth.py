"""A registry with Basic auth (docker-registry with an htpasswd file, as a self-hosted registry is often run) on a
loopback port of its own: sign and verify work with docker login's credentials ($DOCKER_CONFIG/config.json's
`auths`); without them both fail at once naming the missing Basic credentials, not a "did not answer" DNS error
(oras-py's token backend took the Basic realm for a token URL)."""

from __future__ import annotations

import base64
import json
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.registry_server import docker_registry
from tests.support.release_checkout import folded, make_checkout
from tests.support.tiny_images import unique_repository

with warnings.catch_warnings():  # crypt: bcrypt ($2b$, libxcrypt) for htpasswd, no new dependency; 3.11-3.12 only
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt

pytestmark = pytest.mark.integration

USER, SECRET = "robot", "s3cret-for-robot"


@pytest.fixture
def htpasswd_registry(tmp_path: Path) -> Iterator[str]:
    # bcrypt's lowest cost ($2b$04$): the registry checks the password on every request, and at the default cost
    # ($2b$12$, 0.2 CPU-s a check) the sign's and verifies' hundred-odd requests cost most of the test's CPU
    salt = crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)
    (tmp_path / "htpasswd").write_text(f"{USER}:{crypt.crypt(SECRET, salt)}\n")
    auth = f"  htpasswd:\n    realm: basic-realm\n    path: {tmp_path / 'htpasswd'}\n"
    with docker_registry(tmp_path, tmp_path / "data", auth=auth, ready=401) as host:
        yield host


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
