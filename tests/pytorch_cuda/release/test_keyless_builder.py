"""The keyless builder, on a real bundle GitHub Actions made (tests/fixtures/sigstore/README.md), verified offline
against the committed Sigstore trusted root: accepted under its own identity, refused under any other, for another
digest, with a byte of its envelope or certificate changed, or with a root that lacks its CA."""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.release.keyless_builder import (
    BuilderIdentity,
    KeylessRefusalError,
    SigstoreRoot,
    SigstoreRootError,
    check_statement,
    load_sigstore_root,
    verify_bundle,
)
from pytorch_cuda.release.release_policy import load_policy
from tests.support.integration import ROOT

BUNDLE = ROOT / "tests" / "fixtures" / "sigstore" / "reusable-workflow-attestation.sigstore.json"
SUBJECT = "sha256:07e4b8c0e3580b3e4a1eb62c70f1ffb86004d3d94f50767cb404fa7a639b4d05"
# the fixture's own identity, as release-policy.yaml would name it
OWN = BuilderIdentity(
    source_repository="https://github.com/malancas/attest-demo",
    workflow=".github/workflows/shared.yml",
    ref_pattern="refs/heads/main",
    signer_workflow="bdehamer/workflows/.github/workflows/attest.yml",
)


@pytest.fixture(scope="module")
def root() -> SigstoreRoot:
    return load_sigstore_root(ROOT / "keys" / "sigstore-trusted-root.json")


def refusal(data: bytes, root: SigstoreRoot, identity: BuilderIdentity = OWN, digest: str = SUBJECT) -> str:
    with pytest.raises(KeylessRefusalError) as refused:
        verify_bundle(data, digest, identity, root)
    return str(refused.value)


def edited(change: Any) -> bytes:
    document: dict[str, Any] = json.loads(BUNDLE.read_bytes())
    change(document)
    return json.dumps(document).encode()


def test_the_real_bundle_verifies_offline_under_its_own_identity(root: SigstoreRoot) -> None:
    proven = verify_bundle(BUNDLE.read_bytes(), SUBJECT, OWN, root)
    assert proven.signer == "https://github.com/bdehamer/workflows/.github/workflows/attest.yml@refs/heads/main"
    assert (proven.source_ref, proven.commit) == ("refs/heads/main", "8304c42402aa3a569882687e0642c359e5a74ac2")
    assert proven.run == "https://github.com/malancas/attest-demo/actions/runs/9182555064/attempts/1"
    assert proven.log_index == 95781729


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"source_repository": "https://github.com/pytorch-cuda/pytorch-cuda"},
         "keyless certificate source repository (OID 1.3.6.1.4.1.57264.1.12): expected "
         "https://github.com/pytorch-cuda/pytorch-cuda, found https://github.com/malancas/attest-demo"),
        ({"workflow": ".github/workflows/release.yml"},
         "keyless certificate build config (OID 1.3.6.1.4.1.57264.1.18): expected https://github.com/malancas/"
         "attest-demo/.github/workflows/release.yml@refs/heads/main, found https://github.com/malancas/attest-demo/"
         ".github/workflows/shared.yml@refs/heads/main"),
        ({"signer_workflow": "malancas/attest-demo/.github/workflows/shared.yml"},
         "keyless certificate SAN (the signing workflow): expected https://github.com/malancas/attest-demo/.github/"
         "workflows/shared.yml@refs/heads/main, found https://github.com/bdehamer/workflows/.github/workflows/"
         "attest.yml@refs/heads/main"),
        ({"ref_pattern": "refs/tags/v*"},
         "keyless certificate source ref (OID 1.3.6.1.4.1.57264.1.14): expected a ref matching refs/tags/v*, "
         "found refs/heads/main"),
        ({"issuer": "https://accounts.google.com"},
         "keyless certificate issuer (OID 1.3.6.1.4.1.57264.1.8): expected https://accounts.google.com, found "
         "https://token.actions.githubusercontent.com"),
    ],
)  # fmt: skip
def test_another_identity_is_refused_naming_the_claim(root: SigstoreRoot, change: dict[str, str], message: str) -> None:
    assert refusal(BUNDLE.read_bytes(), root, dataclasses.replace(OWN, **change)) == message


def test_another_digest_is_refused(root: SigstoreRoot) -> None:
    message = refusal(BUNDLE.read_bytes(), root, digest="sha256:" + "a" * 64)
    assert message == (f"keyless provenance subject[].digest.sha256: expected {'a' * 64}, found {SUBJECT[7:]}")


def statement(**changes: object) -> bytes:
    """The fixture's own Statement (what its envelope signs), with `changes`."""
    document = json.loads(base64.b64decode(json.loads(BUNDLE.read_bytes())["dsseEnvelope"]["payload"]))
    return json.dumps({**document, **changes}).encode()


@pytest.mark.parametrize(
    ("payload_type", "payload", "message"),
    [
        ("application/json", statement(), "keyless provenance payloadType: expected application/vnd.in-toto+json, "
         "found application/json"),
        ("application/vnd.in-toto+json", statement(_type="https://in-toto.io/Statement/v0.1"),
         "keyless provenance _type: expected https://in-toto.io/Statement/v1, found https://in-toto.io/Statement/v0.1"),
        ("application/vnd.in-toto+json", statement(predicateType="https://cyclonedx.org/bom"),
         "keyless provenance predicateType: expected https://slsa.dev/provenance/v1, found https://cyclonedx.org/bom"),
        ("application/vnd.in-toto+json", statement(subject=[]),
         f"keyless provenance subject[].digest.sha256: expected {SUBJECT[7:]}, found none"),
        ("application/vnd.in-toto+json", b"not json", "keyless provenance payload: expected an in-toto Statement "
         "(JSON), found Expecting value: line 1 column 1 (char 0)"),
    ],
)  # fmt: skip
def test_the_statement_must_be_slsa_provenance_of_the_digest(payload_type: str, payload: bytes, message: str) -> None:
    """What GitHub's workflow also signs for the same digest (actions/attest-sbom: a CycloneDX predicate) or an
    older Statement is not a provenance of the digest; the fixture's own Statement is."""
    check_statement("application/vnd.in-toto+json", statement(), SUBJECT)
    with pytest.raises(KeylessRefusalError) as refused:
        check_statement(payload_type, payload, SUBJECT)
    assert str(refused.value) == message


def test_a_subject_rewritten_to_another_digest_breaks_the_signature(root: SigstoreRoot) -> None:
    def rewrite(document: dict[str, Any]) -> None:
        payload = base64.b64decode(document["dsseEnvelope"]["payload"]).replace(SUBJECT[7:].encode(), b"a" * 64)
        document["dsseEnvelope"]["payload"] = base64.b64encode(payload).decode()

    message = refusal(edited(rewrite), root, digest="sha256:" + "a" * 64)
    assert message.startswith("keyless bundle: expected a DSSE envelope signed by a certificate of")
    assert message.endswith("found VerificationError: DSSE: invalid signature")


def test_a_byte_of_the_envelope_signature_changed_is_refused(root: SigstoreRoot) -> None:
    def flip(document: dict[str, Any]) -> None:
        signature = bytearray(base64.b64decode(document["dsseEnvelope"]["signatures"][0]["sig"]))
        signature[-5] ^= 0x01
        document["dsseEnvelope"]["signatures"][0]["sig"] = base64.b64encode(bytes(signature)).decode()

    message = refusal(edited(flip), root)
    assert message.startswith("keyless bundle: expected a DSSE envelope signed by a certificate of")
    assert message.endswith("found VerificationError: DSSE: invalid signature")


def test_a_certificate_naming_another_signer_breaks_its_chain(root: SigstoreRoot) -> None:
    """One byte of the certificate: its SAN says `bdehamex`, the policy asks for `bdehamex`; Fulcio's signature
    over the certificate no longer holds."""

    def forge(document: dict[str, Any]) -> None:
        material = document["verificationMaterial"]["certificate"]
        der = base64.b64decode(material["rawBytes"])
        assert der.count(b"github.com/bdehamer/workflows") == 2  # the SAN and the build signer URI
        material["rawBytes"] = base64.b64encode(der.replace(b"bdehamer/", b"bdehamex/", 1)).decode()

    forged = dataclasses.replace(OWN, signer_workflow="bdehamex/workflows/.github/workflows/attest.yml")
    message = refusal(edited(forge), root, forged)
    assert message.startswith("keyless bundle: expected a DSSE envelope signed by a certificate of")
    assert "failed to build timestamp certificate chain" in message


def test_a_root_without_the_bundle_s_ca_refuses_it(root: SigstoreRoot, tmp_path: Path) -> None:
    document = json.loads((ROOT / "keys" / "sigstore-trusted-root.json").read_text())
    document["certificateAuthorities"] = [
        ca for ca in document["certificateAuthorities"] if ca["validFor"].get("end")
    ]  # only the 2021-2022 CA: not this one's
    assert len(document["certificateAuthorities"]) == 1
    (tmp_path / "root.json").write_text(json.dumps(document))
    with pytest.raises(KeylessRefusalError) as refused:
        verify_bundle(BUNDLE.read_bytes(), SUBJECT, OWN, load_sigstore_root(tmp_path / "root.json"))
    assert "found CertValidationError: failed to build timestamp certificate chain" in str(refused.value)
    assert refused.value.reason.why == "forged, altered, or from a Sigstore instance this root does not trust"


def test_a_missing_or_malformed_root_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(SigstoreRootError, match="is not in this checkout"):
        load_sigstore_root(tmp_path / "absent.json")
    (tmp_path / "root.json").write_text('{"mediaType": "application/json"}')
    with pytest.raises(SigstoreRootError, match="is not a Sigstore trusted root"):
        load_sigstore_root(tmp_path / "root.json")


def test_a_malformed_bundle_is_refused(root: SigstoreRoot) -> None:
    assert refusal(b"{}", root).startswith("keyless bundle: expected a Sigstore bundle, found InvalidBundle")


def test_the_committed_policy_requires_the_release_workflow_against_the_committed_root() -> None:
    loaded = load_policy(ROOT / "release-policy.yaml")
    keyless = loaded.policy.keyless_builder
    assert keyless is not None
    assert (keyless.signer_workflow, keyless.issuer) == (
        "pytorch-cuda/pytorch-cuda/.github/workflows/release.yml",
        "https://token.actions.githubusercontent.com",
    )
    root = load_sigstore_root(ROOT / keyless.trusted_root)
    p = loaded.policy
    identity = BuilderIdentity(p.source_repository, p.workflow, p.ref_pattern, keyless.signer_workflow, keyless.issuer)
    assert identity.signer("refs/tags/v2.9.1") == (
        "https://github.com/pytorch-cuda/pytorch-cuda/.github/workflows/release.yml@refs/tags/v2.9.1"
    )
    assert refusal(BUNDLE.read_bytes(), root, identity).startswith("keyless certificate source repository")
