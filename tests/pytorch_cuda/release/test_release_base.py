"""The pinned base is the real base (`sign --require-pinned-base`, as release.yml runs it before any tag moves), on
the loopback registry: an image built FROM the published, pinned base signs, and its provenance records the base;
an image not built on it, and a base never published (a local bootstrap), are refused by name."""

from __future__ import annotations

import base64
import json

import pytest
import requests

from tests.support import local_registry as registry
from tests.support.registry_images import push_image
from tests.support.release_checkout import Checkout, folded, make_checkout, pin_base
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration


def sign_pinned(checkout: Checkout, image: str) -> tuple[int, str]:
    signed = checkout.release(
        "sign", image, "--key", str(checkout.folder / "keys" / "release.key"), "--sbom",
        str(checkout.folder / "sbom.cdx.json"), "--variant", "cu128-runtime", "--source-ref", "refs/tags/v9.9.0",
        "--require-pinned-base",
    )  # fmt: skip
    return signed.returncode, folded(signed.stderr)


def test_only_an_image_built_on_the_published_pinned_base_signs(tmp_path_factory: pytest.TempPathFactory) -> None:
    registry.require_registry()
    checkout = make_checkout(tmp_path_factory.mktemp("release") / "checkout", unique_repository(), pinned=False)
    stray = push_image(checkout.repository, "candidate-stray", "a" * 40).digest  # FROM scratch
    pushed = push_image(checkout.repository, "base", "b" * 40)
    base, base_id = pushed.pinned(checkout.repository), pushed.config
    built = push_image(checkout.repository, "candidate-built", "c" * 40, pushed).digest  # FROM the base
    unpublished = checkout.folder / "matrix.yaml"
    python = '    python: "3.13"\n'
    pinned_only = unpublished.read_text().replace(python, f"{python}    digest: {base_id}\n", 1)
    unpublished.write_text(pinned_only)
    status, text = sign_pinned(checkout, f"{checkout.repository}@{built}")
    assert status == 2
    assert f"matrix.yaml's base 'trixie' is pinned to {base_id}, but no published image is named by digest" in text
    assert "a local bootstrap that was never pushed" in text
    (checkout.folder / "matrix.yaml").write_text(unpublished.read_text().replace(f"    digest: {base_id}\n", "", 1))
    pin_base(checkout.folder, base, base_id)
    status, text = sign_pinned(checkout, f"{checkout.repository}@{stray}")
    assert status == 1
    assert f"{checkout.repository}@{stray} was not built on the pinned base {base}: the first layer blobs" in text
    # issue 51: the config claims the base's layers (rootfs.diff_ids), the manifest serves other blobs; the base
    # is judged by the blobs' digests, not by the config's claim (`docker pull` would refuse this image)
    claims = push_image(checkout.repository, "candidate-claims", "d" * 40, claimed_base=pushed).digest
    status, text = sign_pinned(checkout, f"{checkout.repository}@{claims}")
    assert status == 1, text
    assert f"{checkout.repository}@{claims} was not built on the pinned base {base}: the first layer blobs" in text
    assert f"are not the base manifest's ({pushed.layers[0].digest[7:19]}), whatever its config claims" in text
    status, text = sign_pinned(checkout, f"{checkout.repository}@{built}")
    assert status == 0, text
    att = registry.manifest(checkout.path, built.replace(":", "-") + ".att")
    url = f"http://{registry.REGISTRY_HOST}/v2/{checkout.path}/blobs/{att.layers[1]['digest']}"
    envelope = requests.get(url, timeout=30).json()
    statement = json.loads(base64.b64decode(envelope["payload"]))
    dependencies = statement["predicate"]["buildDefinition"]["resolvedDependencies"]
    assert {"uri": f"docker://{base}", "digest": {"sha256": base_id.partition(":")[2]}} in dependencies
