"""A keyless provenance bundle, attached as actions/attest-build-provenance attaches it on a registry without the
referrers API: the recorded bundle of the release workflow, and the manifest and index writes that carry it."""

from __future__ import annotations

import hashlib
import json

import requests

from pytorch_cuda.release.cosign_layout import OCI_INDEX
from tests.support import local_registry as registry
from tests.support.integration import ROOT
from tests.support.release_checkout import OCI_MANIFEST, Checkout

BUNDLE = (ROOT / "tests" / "fixtures" / "sigstore" / "reusable-workflow-attestation.sigstore.json").read_bytes()
BUNDLE_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"


def put_manifest(url: str, data: bytes, media_type: str) -> None:
    """PUT one manifest; the registry must answer 201."""
    pushed = requests.put(url, data=data, headers={"Content-Type": media_type}, timeout=30)
    assert pushed.status_code == 201, pushed.text


def attach_bundle(checkout: Checkout, digest: str, bundle: bytes) -> str:
    """What actions/attest-build-provenance does with push-to-registry on a registry without the referrers API
    (@sigstore/oci): the bundle as the one layer of a manifest whose subject is the image, then that manifest
    appended to the `sha256-<hex>` index. Its digest."""
    base = f"http://{registry.REGISTRY_HOST}/v2/{checkout.path}"
    for blob in (bundle, b"{}"):
        started = requests.post(f"{base}/blobs/uploads/", timeout=30)
        location = started.headers["Location"]
        location = f"http://{registry.REGISTRY_HOST}{location}" if location.startswith("/") else location
        blob_digest = "sha256:" + hashlib.sha256(blob).hexdigest()
        done = requests.put(location, params={"digest": blob_digest}, data=blob, timeout=30,
                            headers={"Content-Type": "application/octet-stream"})  # fmt: skip
        assert done.status_code == 201, done.text
    image = registry.manifest(checkout.path, digest)
    served = requests.get(f"{base}/manifests/{digest}", headers={"Accept": OCI_MANIFEST}, timeout=30).content
    annotations = {"dev.sigstore.bundle.content": "dsse-envelope",
                   "dev.sigstore.bundle.predicateType": "https://slsa.dev/provenance/v1"}  # fmt: skip
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": BUNDLE_TYPE,
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "size": 2,
                   "digest": "sha256:" + hashlib.sha256(b"{}").hexdigest()},
        "layers": [{"mediaType": BUNDLE_TYPE, "size": len(bundle),
                    "digest": "sha256:" + hashlib.sha256(bundle).hexdigest()}],
        "subject": {"mediaType": image.body["mediaType"], "size": len(served), "digest": digest},
        "annotations": annotations,
    }).encode()  # fmt: skip
    manifest_digest = "sha256:" + hashlib.sha256(manifest).hexdigest()
    put_manifest(f"{base}/manifests/{manifest_digest}", manifest, OCI_MANIFEST)
    tag = digest.replace(":", "-")
    index = registry.manifest(checkout.path, tag).body  # sign wrote it: .sig and .att
    index["manifests"].append({"mediaType": OCI_MANIFEST, "digest": manifest_digest, "size": len(manifest),
                               "artifactType": BUNDLE_TYPE, "annotations": annotations})  # fmt: skip
    put_manifest(f"{base}/manifests/{tag}", json.dumps(index).encode(), OCI_INDEX)
    return manifest_digest
