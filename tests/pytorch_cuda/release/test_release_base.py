"""The pinned base is the real base (`sign --require-pinned-base`, as release.yml runs it before any tag moves), on
the loopback registry: an image built FROM the published, pinned base signs, and its provenance records the base;
an image not built on it, and a base never published (a local bootstrap), are refused by name."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import tarfile
import uuid

import docker
import docker.errors
import pytest
import requests

from tests.support import local_registry as registry
from tests.support.release_checkout import Checkout, folded, pushed_candidates
from tests.support.tiny_images import build_and_push_image

pytestmark = pytest.mark.integration


def build_on(client: docker.DockerClient, base: str, repository: str, tag: str) -> str:
    """An image FROM `base` (pulled from the loopback registry), one file added, pushed; its manifest digest."""
    dockerfile = f"FROM {base}\nCOPY more.txt /more.txt\n".encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in (("Dockerfile", dockerfile), ("more.txt", uuid.uuid4().hex.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    labels = {"org.opencontainers.image.source": "https://github.com/pytorch-cuda/pytorch-cuda",
              "org.opencontainers.image.revision": "c" * 40}  # fmt: skip
    image, _ = client.images.build(fileobj=buffer, custom_context=True, labels=labels, rm=True)
    image.tag(repository, tag)
    events = list(client.api.push(repository, tag=tag, stream=True, decode=True))
    with contextlib.suppress(docker.errors.APIError):
        client.images.remove(f"{repository}:{tag}")
        client.images.remove(str(image.id))
    return str([e["aux"]["Digest"] for e in events if isinstance(e.get("aux"), dict) and "Digest" in e["aux"]][-1])


def pin(checkout: Checkout, upstream: str, digest: str) -> None:
    matrix = checkout.folder / "matrix.yaml"
    text = matrix.read_text().replace(
        "    upstream: docker.io/library/debian:trixie-slim\n", f"    upstream: {upstream}\n    digest: {digest}\n", 1
    )
    matrix.write_text(text)


def sign_pinned(checkout: Checkout, image: str) -> tuple[int, str]:
    signed = checkout.release(
        "sign", image, "--key", str(checkout.folder / "keys" / "release.key"), "--sbom",
        str(checkout.folder / "sbom.cdx.json"), "--variant", "cu128-runtime", "--source-ref", "refs/tags/v9.9.0",
        "--require-pinned-base",
    )  # fmt: skip
    return signed.returncode, folded(signed.stderr)


def test_only_an_image_built_on_the_published_pinned_base_signs(
    client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory
) -> None:
    checkout, (stray,) = pushed_candidates(client, tmp_path_factory, "stray")
    base_digest, base_id = build_and_push_image(client, checkout.repository, "base", "b" * 40)
    base = f"{checkout.repository}@{base_digest}"
    built = build_on(client, base, checkout.repository, "candidate-built")
    unpublished = checkout.folder / "matrix.yaml"
    python = '    python: "3.13"\n'
    pinned_only = unpublished.read_text().replace(python, f"{python}    digest: {base_id}\n", 1)
    unpublished.write_text(pinned_only)
    status, text = sign_pinned(checkout, f"{checkout.repository}@{built}")
    assert status == 2
    assert f"matrix.yaml's base 'trixie' is pinned to {base_id}, but no published image is named by digest" in text
    assert "a local bootstrap that was never pushed" in text
    (checkout.folder / "matrix.yaml").write_text(unpublished.read_text().replace(f"    digest: {base_id}\n", "", 1))
    pin(checkout, base, base_id)
    status, text = sign_pinned(checkout, f"{checkout.repository}@{stray}")
    assert status == 1
    assert f"{checkout.repository}@{stray} was not built on the pinned base {base}: its first layers" in text
    status, text = sign_pinned(checkout, f"{checkout.repository}@{built}")
    assert status == 0, text
    att = registry.manifest(checkout.path, built.replace(":", "-") + ".att")
    url = f"http://{registry.REGISTRY_HOST}/v2/{checkout.path}/blobs/{att.layers[1]['digest']}"
    envelope = requests.get(url, timeout=30).json()
    statement = json.loads(base64.b64decode(envelope["payload"]))
    dependencies = statement["predicate"]["buildDefinition"]["resolvedDependencies"]
    assert {"uri": f"docker://{base}", "digest": {"sha256": base_id.partition(":")[2]}} in dependencies
