"""Issue 51's Done-when, memory: `build.py release verify` stays under 1 GB of memory whatever the registry serves,
measured (the child's peak RSS, from wait4) on a real registry (docker-registry on a free loopback port, its storage
in the test's folder and removed after): a .sig whose first layer is a streamed synthetic blob of several GB, and a
.sig padded with more than 1,000 layers. Each is refused with its named reason; the untouched release verifies."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from pytorch_cuda.release.cosign_layout import SIGNATURE_ANNOTATION, SIMPLE_SIGNING, tag_for
from tests.support import local_registry
from tests.support.measured_verify import measured_verify
from tests.support.registry_server import docker_registry
from tests.support.release_checkout import OCI_MANIFEST, folded, make_checkout, released

pytestmark = pytest.mark.integration

HUGE_BLOB = int(os.environ.get("HEAVY_BLOB_BYTES", str(3 << 30)))  # several GB, streamed (3 GiB by default)
PADDED_LAYERS = 1200
MOST_RSS = 1 << 30  # the Done-when's bound: under 1 GB whatever the registry serves
CHUNK = 1 << 20


@pytest.fixture
def own_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """docker-registry on a free loopback port, storing under tmp_path (removed after: the blob is GBs); the test
    helpers' registry constants point at it."""
    data = tmp_path / "registry-data"
    try:
        with docker_registry(tmp_path, data) as host:
            monkeypatch.setattr(local_registry, "REGISTRY_HOST", host)
            monkeypatch.setattr(local_registry, "REGISTRY", f"{host}/{local_registry.NAMESPACE}")
            yield host
    finally:
        shutil.rmtree(data, ignore_errors=True)


def push_streamed_blob(host: str, path: str, size: int) -> str:
    """A synthetic blob of `size` bytes, generated and hashed as it streams (chunked PATCH, then PUT ?digest=):
    never held in memory, here or in the registry."""
    digest = hashlib.sha256()
    block = hashlib.sha256(os.urandom(32)).digest() * (CHUNK // 32)

    def chunks() -> Iterator[bytes]:
        sent = 0
        while sent < size:
            piece = block[: min(CHUNK, size - sent)]
            digest.update(piece)
            sent += len(piece)
            yield piece

    started = requests.post(f"http://{host}/v2/{path}/blobs/uploads/", timeout=30)
    assert started.status_code == 202, started.text
    location = started.headers["Location"]
    location = f"http://{host}{location}" if location.startswith("/") else location
    patched = requests.patch(location, data=chunks(), timeout=1800,
                             headers={"Content-Type": "application/octet-stream"})  # fmt: skip
    assert patched.status_code == 202, patched.text
    location = patched.headers["Location"]
    location = f"http://{host}{location}" if location.startswith("/") else location
    done = requests.put(location, params={"digest": f"sha256:{digest.hexdigest()}"}, timeout=1800)
    assert done.status_code == 201, done.text
    return f"sha256:{digest.hexdigest()}"


def put_sig(host: str, path: str, digest: str, layers: list[dict[str, object]]) -> None:
    """Replace the image's .sig with `layers` (the registry's tag is writable by anyone who can push)."""
    url = f"http://{host}/v2/{path}/manifests/{tag_for(digest, 'sig')}"
    document = requests.get(url, headers={"Accept": OCI_MANIFEST}, timeout=30).json()
    document["layers"] = layers
    pushed = requests.put(url, data=json.dumps(document).encode(), headers={"Content-Type": OCI_MANIFEST}, timeout=60)
    assert pushed.status_code == 201, pushed.text


def test_verify_stays_bounded_on_a_multi_gb_blob_and_a_padded_sig(own_registry: str, tmp_path: Path) -> None:
    host = own_registry
    checkout = make_checkout(tmp_path / "checkout", f"{host}/ci/release-heavy")
    image = released(checkout, "a" * 40, "v9.9")
    ref = f"{checkout.repository}:v9.9"
    untouched = measured_verify(checkout, ref, tmp_path)
    assert untouched.status == 0, untouched.stderr
    sig_url = f"http://{host}/v2/{checkout.path}/manifests/{tag_for(image, 'sig')}"
    real = requests.get(sig_url, headers={"Accept": OCI_MANIFEST}, timeout=30).json()["layers"]

    huge = push_streamed_blob(host, checkout.path, HUGE_BLOB)
    junk = {"mediaType": SIMPLE_SIGNING, "digest": huge, "size": HUGE_BLOB, "annotations": {SIGNATURE_ANNOTATION: ""}}
    put_sig(host, checkout.path, image, [junk, *real])
    blob = measured_verify(checkout, ref, tmp_path)
    said = folded(blob.stderr)
    assert blob.status == 2, said
    assert f"blob {huge} of {checkout.repository} is larger than the {64 << 20} bytes allowed for it (the " \
        f"registry declares {HUGE_BLOB} bytes): refused before reading" in said  # fmt: skip
    assert "does not hash to its digest" not in said  # too big is said as too big
    assert blob.peak_rss < MOST_RSS, blob

    padded = [{**real[0], "annotations": {SIGNATURE_ANNOTATION: "AAAA"}}] * PADDED_LAYERS
    put_sig(host, checkout.path, image, [*padded, *real])
    layers = measured_verify(checkout, ref, tmp_path)
    said = folded(layers.stderr)
    assert layers.status == 1, said
    assert f"dev.cosignproject.cosign/signature (.sig layers): expected at most 16 signatures, found " \
        f"{PADDED_LAYERS + len(real)} signatures (a .sig padded to slow verify; none read)" in said  # fmt: skip
    assert layers.peak_rss < MOST_RSS, layers

    put_sig(host, checkout.path, image, real)  # the attack undone: the release verifies again
    assert measured_verify(checkout, ref, tmp_path).status == 0
    for name, run in (("untouched", untouched), (f"{HUGE_BLOB} B blob", blob), (f"{PADDED_LAYERS} layers", layers)):
        print(f"verify, {name}: exit {run.status}, peak RSS {run.peak_rss / 2**20:.0f} MiB, {run.seconds:.2f} s")
