"""Issue 51's Done-when, memory: `build.py release verify` stays under 1 GB of memory whatever the registry serves,
measured (the child's peak RSS, from wait4) on a real registry (docker-registry on a free loopback port, its storage
in the test's folder and removed after): a .sig whose first layer is a streamed synthetic blob of several GB, and a
.sig padded with more than 1,000 layers. Each is refused with its named reason; the untouched release verifies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytorch_cuda.release.cosign_layout import SIGNATURE_ANNOTATION, SIMPLE_SIGNING
from tests.support.measured_verify import measured_verify
from tests.support.release_checkout import folded, make_checkout, released
from tests.support.throwaway_registry import push_streamed_blob, put_sig, sig_layers, throwaway_registry

pytestmark = pytest.mark.integration

HUGE_BLOB = int(os.environ.get("HEAVY_BLOB_BYTES", str(3 << 30)))  # several GB, streamed (3 GiB by default)
PADDED_LAYERS = 1200
MOST_RSS = 1 << 30  # the Done-when's bound: under 1 GB whatever the registry serves


@pytest.fixture
def own_registry(tmp_path: Path) -> Iterator[str]:
    """docker-registry on a free loopback port, storing under tmp_path (removed after: the blob is GBs); the test
    helpers' registry constants point at it."""
    with throwaway_registry(tmp_path) as host:
        yield host


def test_verify_stays_bounded_on_a_multi_gb_blob_and_a_padded_sig(own_registry: str, tmp_path: Path) -> None:
    host = own_registry
    checkout = make_checkout(tmp_path / "checkout", f"{host}/ci/release-heavy")
    image = released(checkout, "a" * 40, "v9.9")
    ref = f"{checkout.repository}:v9.9"
    untouched = measured_verify(checkout, ref, tmp_path)
    assert untouched.status == 0, untouched.stderr
    real = sig_layers(host, checkout.path, image)

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
