"""The registry client and an image's config against a small open registry on a loopback port (plain HTTP, as
loopback registries speak): an index resolved to its linux/amd64 image ID, a config checked against its digest,
and the refusals a bump or a release must not get past."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import pytest

from pytorch_cuda.oci.image_config import config_digest, image_config, resolve_tag
from pytorch_cuda.oci.registry_client import (
    MOST_MANIFEST_BYTES,
    BlobTooLargeError,
    ManifestTooLargeError,
    ReferrersTooLargeError,
    RegistryAccessError,
    RegistryClient,
    is_loopback,
    reference,
)
from tests.support.open_registry import HUGE, IMAGE, INDEX, OpenRegistry, serving


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


CONFIG = json.dumps({"config": {"Labels": {"a": "b"}}, "rootfs": {"diff_ids": ["sha256:" + "1" * 64]}}).encode()
AMD64 = json.dumps({"schemaVersion": 2, "mediaType": IMAGE, "config": {"digest": _digest(CONFIG)}}).encode()
ARM64 = json.dumps({"schemaVersion": 2, "mediaType": IMAGE, "config": {"digest": "sha256:" + "2" * 64}}).encode()


def _index(*platforms: tuple[str, bytes]) -> bytes:
    entries = [{"digest": _digest(raw), "platform": {"os": "linux", "architecture": arch}} for arch, raw in platforms]
    return json.dumps({"schemaVersion": 2, "mediaType": INDEX, "manifests": entries}).encode()


@pytest.fixture
def host() -> Iterator[str]:
    with serving() as address:
        yield address


def _hold(index: bytes, config: bytes = CONFIG) -> None:
    OpenRegistry.declared = {}
    OpenRegistry.objects = {
        "/v2/o/base/manifests/trixie": (INDEX, index),
        f"/v2/o/base/manifests/{_digest(AMD64)}": (IMAGE, AMD64),
        f"/v2/o/base/manifests/{_digest(ARM64)}": (IMAGE, ARM64),
        f"/v2/o/base/blobs/{_digest(CONFIG)}": ("application/octet-stream", config),
    }


@pytest.mark.parametrize(
    ("name", "loopback"),
    [("127.0.0.1:5000", True), ("localhost:5000", True), ("[::1]:5000", True), ("ghcr.io", False), ("10.0.0.1", False)],
)
def test_only_loopback_registries_speak_plain_http(name: str, loopback: bool) -> None:
    assert is_loopback(name) is loopback


def test_a_reference_without_a_registry_host_is_refused() -> None:
    with pytest.raises(RegistryAccessError, match="names no registry host"):
        reference("pytorch-cuda:v2.9")


def test_a_tag_resolves_to_its_index_digest_and_its_linux_amd64_image_id(host: str) -> None:
    index = _index(("arm64", ARM64), ("amd64", AMD64))
    _hold(index)
    assert resolve_tag(f"{host}/o/base:trixie") == (_digest(index), _digest(CONFIG))


def test_a_tag_without_a_linux_amd64_image_is_refused(host: str) -> None:
    _hold(_index(("arm64", ARM64)))
    with pytest.raises(RegistryAccessError, match="has no linux/amd64 image"):
        resolve_tag(f"{host}/o/base:trixie")


def test_the_config_is_read_only_when_it_hashes_to_its_digest(host: str) -> None:
    _hold(_index(("amd64", AMD64)))
    client = RegistryClient(host)
    digest = config_digest(AMD64)
    assert digest == _digest(CONFIG)
    assert image_config(client, f"{host}/o/base", digest)["rootfs"]["diff_ids"] == ["sha256:" + "1" * 64]
    _hold(_index(("amd64", AMD64)), config=CONFIG + b" ")  # the registry serves other bytes under the digest
    with pytest.raises(RegistryAccessError, match="does not hash to its digest"):
        image_config(client, f"{host}/o/base", digest)


def test_an_index_names_no_config() -> None:
    assert config_digest(_index(("amd64", AMD64))) is None
    assert config_digest(b'{"config": {}}') is None


def test_a_manifest_declared_larger_than_its_cap_is_refused_before_reading(host: str) -> None:
    _hold(_index(("amd64", AMD64)))
    OpenRegistry.declared = {"/v2/o/base/manifests/trixie": str(10 << 30)}  # 10 GiB declared, nothing sent
    with pytest.raises(ManifestTooLargeError) as refused:
        RegistryClient(host).manifest(f"{host}/o/base:trixie")
    assert refused.value.exit_status == 2
    assert refused.value.cause == (f"the manifest of {host}/o/base:trixie is larger than the {MOST_MANIFEST_BYTES} "
                                   f"bytes allowed for it (the registry declares {10 << 30} bytes): refused before "
                                   "reading")  # fmt: skip
    assert refused.value.paragraph().startswith("error: the manifest of")
    assert "Fix: an answer this large" in refused.value.paragraph()


@pytest.mark.parametrize("how", ["none", "gzip"])
def test_a_manifest_whose_declaration_lies_is_refused_as_its_bytes_arrive(host: str, how: str) -> None:
    _hold(_index(("amd64", AMD64)))
    OpenRegistry.objects["/v2/o/base/manifests/trixie"] = (INDEX, HUGE)
    OpenRegistry.declared = {"/v2/o/base/manifests/trixie": how}
    with pytest.raises(ManifestTooLargeError, match=f"more than {MOST_MANIFEST_BYTES} bytes arrived; the registry "
                       "declared"):  # fmt: skip
        RegistryClient(host).manifest(f"{host}/o/base:trixie")


def test_a_manifest_within_its_cap_is_read_whatever_its_declaration(host: str) -> None:
    index = _index(("amd64", AMD64))
    for how in (None, "none", "gzip"):
        _hold(index)
        OpenRegistry.declared = {} if how is None else {"/v2/o/base/manifests/trixie": how}
        found = RegistryClient(host).manifest(f"{host}/o/base:trixie")
        assert found is not None
        assert found.raw == index


def test_a_referrers_answer_larger_than_its_cap_is_refused_declared_or_not(host: str) -> None:
    digest = "sha256:" + "3" * 64
    path = f"/v2/o/base/referrers/{digest}"
    _hold(_index(("amd64", AMD64)))
    OpenRegistry.objects[path] = (INDEX, HUGE)
    with pytest.raises(ReferrersTooLargeError, match="refused before reading"):
        RegistryClient(host).referrers_api(f"{host}/o/base", digest)
    OpenRegistry.declared = {path: "none"}
    with pytest.raises(ReferrersTooLargeError, match=f"the referrers API's answer for {digest} is larger than the "
                       f"{MOST_MANIFEST_BYTES} bytes allowed for it \\(more than"):  # fmt: skip
        RegistryClient(host).referrers_api(f"{host}/o/base", digest)


def test_a_blob_that_decompresses_past_its_cap_is_refused_as_it_arrives(host: str) -> None:
    _hold(_index(("amd64", AMD64)), config=b"0" * (2 << 20))
    OpenRegistry.declared = {f"/v2/o/base/blobs/{_digest(CONFIG)}": "gzip"}  # 2 KiB on the wire, 2 MiB inside
    with pytest.raises(BlobTooLargeError, match="larger than the 1048576 bytes allowed for it \\(more than"):
        RegistryClient(host).blob(reference(f"{host}/o/base"), _digest(CONFIG), limit=1 << 20)
