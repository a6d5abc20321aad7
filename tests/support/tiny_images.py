"""Small images built FROM scratch on the real engine (kilobytes, not the 7.5 GB cu12 image), each with its own
file (so its own digest), pushed to the loopback registry, for tests that need the image in the engine too
(tests/pytorch_cuda/bump/test_bump_base.py); and the tests' unique repository names. The release tests push theirs
through the registry's HTTP API instead (registry_images.py)."""

from __future__ import annotations

import contextlib
import io
import tarfile
import uuid

import docker
import docker.errors

from tests.support import local_registry as registry

SOURCE = "https://github.com/pytorch-cuda/pytorch-cuda"


def _context(text: str) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in (("Dockerfile", b"FROM scratch\nCOPY hello.txt /hello.txt\n"), ("hello.txt", text.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def build_and_push(client: docker.DockerClient, repository: str, tag: str, revision: str) -> str:
    """Build a one-file image labelled with `revision`, push repository:tag; return the registry's digest."""
    return build_and_push_image(client, repository, tag, revision)[0]


def build_and_push_image(client: docker.DockerClient, repository: str, tag: str, revision: str) -> tuple[str, str]:
    """build_and_push, returning (the registry's manifest digest, the image ID: the sha256 of its config)."""
    labels = {"org.opencontainers.image.source": SOURCE, "org.opencontainers.image.revision": revision}
    image, _ = client.images.build(
        fileobj=_context(f"{revision} {uuid.uuid4()}\n"), custom_context=True, labels=labels, rm=True
    )
    image.tag(repository, tag)
    events = list(client.api.push(repository, tag=tag, stream=True, decode=True))
    errors = [e["error"] for e in events if "error" in e]
    assert not errors, errors
    digest = [e["aux"]["Digest"] for e in events if isinstance(e.get("aux"), dict) and "Digest" in e["aux"]][-1]
    with contextlib.suppress(docker.errors.APIError):
        client.images.remove(f"{repository}:{tag}")
        client.images.remove(str(image.id))
    return str(digest), str(image.id)


def unique_repository() -> str:
    return f"{registry.REGISTRY}/release-test-{uuid.uuid4().hex[:8]}"
