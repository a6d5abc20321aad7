"""cosign's registry layout, checked against cosign's own published bytes (no cosign binary here):

- sigstore/sigstore pkg/signature/payload/payload_test.go: the simple-signing payload json.Marshal writes;
- sigstore/cosign specs/ATTESTATION_SPEC.md: a one-layer attestation manifest, config 233 bytes,
  sha256:83bd5fb5..., layer sha256:ed3ad03d...;
- a three-attestation `.att` manifest cosign wrote (`oras manifest fetch` of a ttl.sh image): config 451 bytes,
  sha256:976cf565..., layers annotated `dev.cosignproject.cosign/signature: ""` and `predicateType`.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from securesystemslib.signer import Signer, SSlibKey

from pytorch_cuda.release import keys
from pytorch_cuda.release.cosign_layout import (
    OCI_INDEX,
    SIG_ARTIFACT_TYPE,
    Blob,
    Subject,
    artifact_manifest,
    attestation_layer,
    compact,
    config_blob,
    referrers_index,
    sha256,
    signature_layer,
    simple_signing_payload,
    tag_for,
)
from pytorch_cuda.release.envelopes import dsse_envelope, open_envelope, sign_raw, verifying_key

DEAD_BEEF = "sha256:" + "d34db33f" * 8
# sigstore/sigstore payload_test.go, TestMarshalCosign "no claims": the exact bytes cosign signs
SIGSTORE_PAYLOAD = (
    '{"critical":{"identity":{"docker-reference":"example.com/test/image"},"image":{"docker-manifest-digest":'
    '"sha256:d34db33fd34db33fd34db33fd34db33fd34db33fd34db33fd34db33fd34db33f"},"type":"cosign container image '
    'signature"},"optional":null}'
)
# a `.att` manifest written by cosign (three attestations), as the registry served it
COSIGN_ATT_MANIFEST: dict[str, Any] = {
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {
        "mediaType": "application/vnd.oci.image.config.v1+json",
        "size": 451,
        "digest": "sha256:976cf56532cde41aa4625feee5d0381c43420890edd1b770395872878198dee6",
    },
    "layers": [
        {"mediaType": "application/vnd.dsse.envelope.v1+json", "size": 103352,
         "digest": "sha256:c6109664bb3d5b7155c9b6fcca9de57e90a7e1842b414c77ebbd4dca127ae4e1",
         "annotations": {"dev.cosignproject.cosign/signature": "", "predicateType": "https://spdx.dev/Document"}},
        {"mediaType": "application/vnd.dsse.envelope.v1+json", "size": 14164,
         "digest": "sha256:f640fdc19cd6fde632625350dfcd4411f01f7734fc19c5d0ae221bb9fb6c9bff",
         "annotations": {"dev.cosignproject.cosign/signature": "",
                         "predicateType": "https://cosign.sigstore.dev/attestation/vuln/v1"}},
        {"mediaType": "application/vnd.dsse.envelope.v1+json", "size": 652,
         "digest": "sha256:718b9b375b3fe4dd5cd6bbb89e123ac0b6fac5235cd30716786cfe911f7ffdbe",
         "annotations": {"dev.cosignproject.cosign/signature": "",
                         "predicateType": "https://github.com/kalebpederson/schemas/code-coverage"}},
    ],
}  # fmt: skip


def test_the_signed_payload_is_the_one_sigstore_marshals_byte_for_byte() -> None:
    assert simple_signing_payload("example.com/test/image", DEAD_BEEF).decode() == SIGSTORE_PAYLOAD


def test_the_config_blob_is_cosign_s_byte_for_byte() -> None:
    one = config_blob(["sha256:ed3ad03d3b87843b5419d7dce9d50a3e0f45554b2ba93bf378611cae6b450cff"])
    assert (len(one), sha256(one)) == (
        233,
        "sha256:83bd5fb5b39f65f28e50a86d48fa79c07880befc292d92eebdc18531054b070c",
    )  # ATTESTATION_SPEC.md's example manifest
    three = config_blob([layer["digest"] for layer in COSIGN_ATT_MANIFEST["layers"]])
    assert (len(three), sha256(three)) == (451, COSIGN_ATT_MANIFEST["config"]["digest"])


def test_an_attestation_manifest_has_cosign_s_fields_in_cosign_s_order() -> None:
    layers = [attestation_layer(b'{"payloadType":"x"}', "https://slsa.dev/provenance/v1")]
    built = json.loads(artifact_manifest(layers, None, None).raw)
    assert list(built) == list(COSIGN_ATT_MANIFEST)
    assert list(built["layers"][0]) == list(COSIGN_ATT_MANIFEST["layers"][0])
    assert built["layers"][0]["annotations"] == {
        "dev.cosignproject.cosign/signature": "",
        "predicateType": "https://slsa.dev/provenance/v1",
    }
    expected = dict(COSIGN_ATT_MANIFEST, config=built["config"], layers=built["layers"])
    assert artifact_manifest(layers, None, None).raw == compact(expected)  # the same bytes, given the same blobs


def test_the_referrer_fields_follow_cosign_s_and_the_tag_schema_lists_them() -> None:
    subject = Subject("application/vnd.oci.image.manifest.v1+json", DEAD_BEEF, 1234)
    sig = artifact_manifest(
        [Blob(b"payload", "application/vnd.dev.cosign.simplesigning.v1+json")], subject, SIG_ARTIFACT_TYPE
    )
    document = json.loads(sig.raw)
    assert list(document)[-2:] == ["subject", "artifactType"]
    assert document["subject"] == {"mediaType": subject.media_type, "size": 1234, "digest": DEAD_BEEF}
    index = json.loads(referrers_index(None, [sig]))
    assert (index["schemaVersion"], index["mediaType"]) == (2, OCI_INDEX)
    assert index["manifests"] == [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sig.digest, "size": len(sig.raw),
         "artifactType": SIG_ARTIFACT_TYPE}
    ]  # fmt: skip
    resigned = artifact_manifest(
        [Blob(b"payload 2", "application/vnd.dev.cosign.simplesigning.v1+json")], subject, SIG_ARTIFACT_TYPE
    )
    kept = {"mediaType": "x", "digest": "sha256:" + "0" * 64, "size": 1, "artifactType": "application/other"}
    existing = compact({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [kept, *index["manifests"]]})
    assert json.loads(referrers_index(existing, [resigned]))["manifests"] == [
        kept, {**index["manifests"][0], "digest": resigned.digest, "size": len(resigned.raw)}
    ]  # fmt: skip
    assert tag_for(DEAD_BEEF, "sig") == "sha256-" + "d34db33f" * 8 + ".sig"
    assert tag_for(DEAD_BEEF, "") == "sha256-" + "d34db33f" * 8


def _pair(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Signer, SSlibKey]:
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, "pass phrase")
    public = tmp_path / f"{name}.pub"
    keys.generate(tmp_path / f"{name}.key", public)
    return keys.signer(str(tmp_path / f"{name}.key"), public), keys.public_key(public)


def test_the_signature_annotation_is_base64_der_ecdsa_over_the_payload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    signer, public = _pair(tmp_path, "a", monkeypatch)
    _, other = _pair(tmp_path, "b", monkeypatch)
    payload = simple_signing_payload("ghcr.io/o/r", DEAD_BEEF)
    layer = signature_layer(payload, sign_raw(signer, payload))
    der = base64.b64decode(layer.annotations["dev.cosignproject.cosign/signature"])
    assert der[0] == 0x30  # an ASN.1 SEQUENCE: cosign's ECDSA signature encoding
    assert verifying_key([other, public], payload, der) is public
    assert verifying_key([other], payload, der) is None
    assert verifying_key([public], payload.replace(b"o/r", b"o/x"), der) is None


def test_a_dsse_envelope_is_cosign_s_shape_and_verifies_only_with_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    signer, public = _pair(tmp_path, "a", monkeypatch)
    _, other = _pair(tmp_path, "b", monkeypatch)
    envelope = dsse_envelope(signer, b'{"_type":"https://in-toto.io/Statement/v1"}', "application/vnd.in-toto+json")
    document = json.loads(envelope)
    assert list(document) == ["payloadType", "payload", "signatures"]
    assert document["signatures"][0]["keyid"] == ""
    assert open_envelope(envelope, [public])[2] is public
    assert open_envelope(envelope, [other])[2] is None
    document["payload"] = base64.b64encode(b'{"_type":"altered"}').decode()
    assert open_envelope(json.dumps(document).encode(), [public])[2] is None
