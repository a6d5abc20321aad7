"""The builder, proven without a key anyone holds: a keyless Sigstore bundle, verified offline.

GitHub's actions/attest-build-provenance (release.yml) gets a short-lived Fulcio certificate for the run's OIDC
token, signs an in-toto Statement (SLSA provenance v1, subject: the image digest) as a DSSE envelope, logs it in
Rekor and writes a Sigstore bundle (v0.3). The certificate's extensions name what GitHub's token says about the
run: the issuer, the signing workflow (its SAN), the repository, the ref, the commit and the workflow that ran.
A laptop with the release key cannot make one: the certificate is only issued for GitHub's token.

sigstore-python verifies the bundle against a trusted root committed in the checkout (release-policy.yaml's
`keyless_builder.trusted_root`: Sigstore's production trusted_root.json, never a root the registry serves), with
no network: the certificate chain to Fulcio's CA at the time Rekor recorded, the embedded SCT against the CT log
keys, the Rekor entry (inclusion proof and signed checkpoint, or promise) against the log keys, the entry's
consistency with the envelope, and the envelope's signature by the certificate's key. `BuilderIdentity` is the
identity policy sigstore runs on the certificate; this module then checks the Statement: its predicate type is
SLSA provenance and its subject is the digest verified. A refusal names the field, the value expected and found.
"""

from __future__ import annotations

import fnmatch
import json
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat import asn1
from cryptography.x509 import (
    Certificate,
    ExtensionNotFound,
    ObjectIdentifier,
    SubjectAlternativeName,
    UniformResourceIdentifier,
    UnrecognizedExtension,
)
from sigstore.errors import Error as SigstoreError
from sigstore.errors import VerificationError
from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier

from pytorch_cuda.errors import UserError
from pytorch_cuda.release.failures import Reason
from pytorch_cuda.release.statements import IN_TOTO_PAYLOAD, PROVENANCE_PREDICATE, STATEMENT_TYPE

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
# Fulcio's certificate extensions (sigstore/fulcio docs/oid-info.md), each a DER UTF8String
ISSUER = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
SOURCE_REPOSITORY = ObjectIdentifier("1.3.6.1.4.1.57264.1.12")
SOURCE_COMMIT = ObjectIdentifier("1.3.6.1.4.1.57264.1.13")
SOURCE_REF = ObjectIdentifier("1.3.6.1.4.1.57264.1.14")
BUILD_CONFIG = ObjectIdentifier("1.3.6.1.4.1.57264.1.18")  # the workflow that ran: REPO/PATH@REF
RUN = ObjectIdentifier("1.3.6.1.4.1.57264.1.21")


class SigstoreRootError(UserError):
    """The committed Sigstore trusted root is missing or malformed. Exit status 2."""


class KeylessRefusalError(ValueError):
    """A bundle that does not prove the policy's builder built this digest; `reason` names the field."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(f"{reason.field}: expected {reason.expected}, found {reason.found}")
        self.reason = reason


class _IdentityMismatchError(VerificationError):
    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.field)
        self.reason = reason


@dataclass(frozen=True)
class SigstoreRoot:
    path: Path
    trusted_root: TrustedRoot


def load_sigstore_root(path: Path) -> SigstoreRoot:
    """The committed trusted root (Fulcio CAs, CT log keys, Rekor log keys, timestamp authorities)."""
    try:
        return SigstoreRoot(path, TrustedRoot.from_file(str(path)))
    except FileNotFoundError:
        raise SigstoreRootError(
            cause=f"the Sigstore trusted root {path} (release-policy.yaml keyless_builder.trusted_root) is not in "
            "this checkout, so no keyless attestation can be verified",
            fix="restore it from git; docs/release.md ('The builder') says where it comes from",
        ) from None
    except (OSError, ValueError, SigstoreError) as exc:
        raise SigstoreRootError(
            cause=f"{path} is not a Sigstore trusted root ({type(exc).__name__}: {exc})",
            fix="restore it from git, or replace it by Sigstore's trusted_root.json (docs/release.md, 'The builder')",
        ) from exc


def _claim(cert: Certificate, oid: ObjectIdentifier) -> str:
    try:
        extension = cert.extensions.get_extension_for_oid(oid).value
    except ExtensionNotFound:
        return "none"
    if not isinstance(extension, UnrecognizedExtension):
        return "none"
    try:
        return str(asn1.decode_der(str, extension.value))
    except ValueError:
        return "an undecodable value"


def _san(cert: Certificate) -> str:
    """The certificate's URI SAN (Fulcio writes one: the signing workflow at its ref); several are joined."""
    names = cert.extensions.get_extension_for_class(SubjectAlternativeName).value
    sans = names.get_values_for_type(UniformResourceIdentifier)
    return sans[0] if len(sans) == 1 else ", ".join(sans) or "none"


@dataclass(frozen=True)
class BuilderIdentity:
    """Who must have made the certificate: sigstore's VerificationPolicy (`verify(cert)`), run after the chain
    and the SCT are verified. The policy's `source_repository`, `workflow` and `ref_pattern` (the run's
    repository, workflow file and ref, as the key-signed provenance names them) and its keyless builder's
    `signer_workflow` (the SAN) and `issuer`."""

    source_repository: str  # https://github.com/OWNER/REPO
    workflow: str  # .github/workflows/release.yml
    ref_pattern: str  # refs/tags/v* (fnmatch)
    signer_workflow: str  # OWNER/REPO/.github/workflows/release.yml
    issuer: str = GITHUB_ISSUER

    def signer(self, ref: str) -> str:
        """The SAN a certificate of `signer_workflow` at `ref` carries."""
        parts = urllib.parse.urlsplit(self.source_repository)
        return f"{parts.scheme}://{parts.netloc}/{self.signer_workflow}@{ref}"

    def _refuse(self, field: str, expected: str, found: str, why: str) -> _IdentityMismatchError:
        return _IdentityMismatchError(Reason(f"keyless certificate {field}", expected, found, why))

    def verify(self, cert: Certificate) -> None:
        issuer = _claim(cert, ISSUER)
        if issuer != self.issuer:
            raise self._refuse("issuer (OID 1.3.6.1.4.1.57264.1.8)", self.issuer, issuer, "not GitHub Actions' token")
        repository = _claim(cert, SOURCE_REPOSITORY)
        if repository != self.source_repository:
            raise self._refuse("source repository (OID 1.3.6.1.4.1.57264.1.12)", self.source_repository,
                               repository, "made by a workflow run of another repository")  # fmt: skip
        ref = _claim(cert, SOURCE_REF)
        if not fnmatch.fnmatchcase(ref, self.ref_pattern):
            raise self._refuse("source ref (OID 1.3.6.1.4.1.57264.1.14)", f"a ref matching {self.ref_pattern}", ref,
                               "not a release ref")  # fmt: skip
        build = _claim(cert, BUILD_CONFIG)
        if build != f"{self.source_repository}/{self.workflow}@{ref}":
            raise self._refuse("build config (OID 1.3.6.1.4.1.57264.1.18)",
                               f"{self.source_repository}/{self.workflow}@{ref}", build,
                               "made by another workflow of the repository")  # fmt: skip
        san = _san(cert)
        prefix = self.signer("")
        if not san.startswith(prefix) or not fnmatch.fnmatchcase(san.removeprefix(prefix), self.ref_pattern):
            raise self._refuse("SAN (the signing workflow)", self.signer(self.ref_pattern), san,
                               "signed by another workflow")  # fmt: skip


@dataclass(frozen=True)
class ProvenBuilder:
    """What a verified bundle proves: the signing workflow at its ref built the digest from this commit."""

    signer: str  # the SAN: https://github.com/OWNER/REPO/.github/workflows/release.yml@refs/tags/v2.9.1
    source_ref: str
    commit: str
    run: str  # the run's URL
    log_index: int  # its Rekor entry


def check_statement(payload_type: str, payload: bytes, digest: str) -> None:
    """The envelope holds an in-toto Statement, SLSA provenance v1, whose subjects include `digest`."""

    def refuse(field: str, expected: str, found: object, why: str = "") -> KeylessRefusalError:
        return KeylessRefusalError(Reason(f"keyless provenance {field}", expected, str(found), why))

    if payload_type != IN_TOTO_PAYLOAD:
        raise refuse("payloadType", IN_TOTO_PAYLOAD, payload_type)
    try:
        document: dict[str, Any] = json.loads(payload)
    except ValueError as exc:
        raise refuse("payload", "an in-toto Statement (JSON)", exc) from exc
    if document.get("_type") != STATEMENT_TYPE:
        raise refuse("_type", STATEMENT_TYPE, document.get("_type"))
    if document.get("predicateType") != PROVENANCE_PREDICATE:
        raise refuse("predicateType", PROVENANCE_PREDICATE, document.get("predicateType"), "not a provenance")
    hexes = [str((s.get("digest") or {}).get("sha256")) for s in document.get("subject") or [] if isinstance(s, dict)]
    if digest.removeprefix("sha256:") not in hexes:
        raise refuse(
            "subject[].digest.sha256",
            digest.removeprefix("sha256:"),
            ", ".join(hexes) or "none",
            "an attestation of another artifact",
        )


def verify_bundle(data: bytes, digest: str, identity: BuilderIdentity, root: SigstoreRoot) -> ProvenBuilder:
    """Verify a Sigstore bundle for `digest` offline against `root`; KeylessRefusalError names what fails."""
    try:
        bundle = Bundle.from_json(data)
    except (SigstoreError, ValueError) as exc:
        reason = Reason("keyless bundle", "a Sigstore bundle", f"{type(exc).__name__}: {exc}", "malformed or altered")
        raise KeylessRefusalError(reason) from exc
    try:
        payload_type, payload = Verifier(trusted_root=root.trusted_root).verify_dsse(bundle, identity)
    except _IdentityMismatchError as mismatch:
        raise KeylessRefusalError(mismatch.reason) from None
    except (SigstoreError, ValueError) as exc:
        expected = (f"a DSSE envelope signed by a certificate of {root.path.name}'s Fulcio CA, with its SCT and "
                    "a Rekor entry of its logs")  # fmt: skip
        reason = Reason("keyless bundle", expected, f"{type(exc).__name__}: {exc}",
                        "forged, altered, or from a Sigstore instance this root does not trust")  # fmt: skip
        raise KeylessRefusalError(reason) from exc
    check_statement(payload_type, payload, digest)
    cert = bundle.signing_certificate
    try:
        entry = json.loads(data)["verificationMaterial"]["tlogEntries"][0]
        log_index = int(entry["logIndex"])
    except (KeyError, IndexError, TypeError, ValueError):
        log_index = -1
    return ProvenBuilder(
        signer=_san(cert),  # verified above: the one SAN of the signing workflow
        source_ref=_claim(cert, SOURCE_REF),
        commit=_claim(cert, SOURCE_COMMIT),
        run=_claim(cert, RUN),
        log_index=log_index,
    )
