"""Verify a released image against the release policy (release-policy.yaml), in this order:

1. the repository is the policy's;
2. cosign's signature (`.sig`): by a policy key, over a simple-signing payload naming this repository and digest;
3. the attestations (`.att`): SBOM and SLSA provenance, each a DSSE envelope by a policy key, each a Statement
   about this digest in this repository; the provenance names the policy's builder, source repository,
   workflow, a ref the policy allows and a commit; and it was built on the base this checkout pins, from the
   locks this checkout commits for its variant (provenance_inputs.py);
4. the signed release index (TUF, rooted in the committed root): the one reference rule (`_bound`), no role
   expired or older than one this machine has seen, and the index names this repository.
Between 3 and 4 (builder_proof.py): where the policy names a keyless builder, a Sigstore bundle among the digest's
referrers proves that the release workflow built it, from the commit and ref the provenance names.
Each failure names the field, the expected value and the value found (failures.py); exit status 1.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pytorch_cuda.errors import UserError
from pytorch_cuda.oci.registry_client import RegistryClient, RegistryManifest, open_image, reference
from pytorch_cuda.release import release_index
from pytorch_cuda.release.builder_proof import prove_builder
from pytorch_cuda.release.cosign_layout import (
    DSSE_ENVELOPE,
    PREDICATE_ANNOTATION,
    SIGNATURE_ANNOTATION,
    SIGNATURE_TYPE,
    SIMPLE_SIGNING,
    tag_for,
)
from pytorch_cuda.release.envelopes import EnvelopeError, open_envelope, verifying_key
from pytorch_cuda.release.failures import FIX, Reason, VerificationFailedError
from pytorch_cuda.release.index_client import IndexFailureError, trusted_targets
from pytorch_cuda.release.provenance_inputs import InputMismatchError, checked_inputs, inputs_fix
from pytorch_cuda.release.release_policy import LoadedPolicy
from pytorch_cuda.release.statements import IN_TOTO_PAYLOAD, PROVENANCE_PREDICATE, SBOM_PREDICATE, STATEMENT_TYPE

if TYPE_CHECKING:
    from pytorch_cuda.release.keyless_builder import ProvenBuilder


@dataclass(frozen=True)
class Verified:
    image: str
    digest: str
    tags: tuple[str, ...]
    keyid: str
    sbom_components: int
    built: CheckedProvenance
    index_version: int

    @property
    def pull(self) -> str:
        """What to pull: the repository by the verified digest (a tag can move after verify)."""
        return f"{reference(self.image).repository}@{self.digest}"


MOST_SIGNATURE_LAYERS = 16  # cosign writes one per signing; more is padding, refused before any is read


class _Check:
    """The checks of one image; `fail` raises the named reason."""

    def __init__(self, image: str, policy: LoadedPolicy, client: RegistryClient, target: RegistryManifest) -> None:
        self.image, self.policy, self.client, self.target = image, policy, client, target
        self.repository = reference(image).repository

    def fail(self, field: str, expected: object, found: object, why: str = "") -> VerificationFailedError:
        return VerificationFailedError(self.image, self.target.digest, Reason(field, str(expected), str(found), why))

    def equal(self, field: str, expected: object, found: object, why: str = "") -> None:
        if expected != found:
            raise self.fail(field, expected, found, why)

    def attachment(self, suffix: str) -> dict[str, Any]:
        tag = f"{self.repository}:{tag_for(self.target.digest, suffix)}"
        found = self.client.manifest(tag)
        if found is None:
            why = "this digest was never signed, or the tag points at another image than the signed one"
            raise self.fail(f".{suffix}", f"{tag} (cosign's {suffix} of this digest)", "nothing", why)
        document: dict[str, Any] = json.loads(found.raw)
        return document

    def blob(self, layer: dict[str, Any]) -> bytes:
        return self.client.blob(reference(self.image), str(layer.get("digest")))

    def signature(self) -> str:
        layers = [l for l in self.attachment("sig").get("layers") or [] if l.get("mediaType") == SIMPLE_SIGNING]  # noqa: E741
        keys = self.policy.keys
        if len(layers) > MOST_SIGNATURE_LAYERS:
            raise self.fail(f"{SIGNATURE_ANNOTATION} (.sig layers)", f"at most {MOST_SIGNATURE_LAYERS} signatures",
                            f"{len(layers)} signatures", "a .sig padded to slow verify; none read")  # fmt: skip
        for layer in layers:
            payload = self.blob(layer)
            try:
                encoded = str((layer.get("annotations") or {}).get(SIGNATURE_ANNOTATION, ""))
                raw = base64.b64decode(encoded, validate=True)
            except binascii.Error:
                continue
            key = verifying_key(keys, payload, raw)
            if key is None:
                continue
            critical = json.loads(payload).get("critical") or {}
            self.equal("critical.type", SIGNATURE_TYPE, critical.get("type"))
            self.equal("critical.identity.docker-reference", self.repository,
                       (critical.get("identity") or {}).get("docker-reference"),
                       "a signature made for another repository")  # fmt: skip
            self.equal("critical.image.docker-manifest-digest", self.target.digest,
                       (critical.get("image") or {}).get("docker-manifest-digest"),
                       "a signature of another image under this digest's tag")  # fmt: skip
            return key.keyid
        raise self.fail(
            f"{SIGNATURE_ANNOTATION} (.sig, {len(layers)} signature(s))",
            f"a signature by a key of {self.policy.path.name} ({', '.join(k[:16] for k in self.policy.keyids)})",
            "no signature that those keys verify",
            "signed by a key the policy does not name, or altered",
        )

    def statement(self, layers: list[dict[str, Any]], predicate_type: str) -> dict[str, Any]:
        chosen = [l for l in layers if (l.get("annotations") or {}).get(PREDICATE_ANNOTATION) == predicate_type]  # noqa: E741
        if not chosen or chosen[0].get("mediaType") != DSSE_ENVELOPE:
            raise self.fail(f".att predicateType {predicate_type}", "a DSSE envelope", "none")
        try:
            payload_type, payload, key = open_envelope(self.blob(chosen[0]), self.policy.keys)
        except EnvelopeError as exc:
            raise self.fail(f".att {predicate_type}", "a DSSE envelope", exc) from exc
        if key is None:
            raise self.fail(f".att {predicate_type} signature", f"a signature by a key of {self.policy.path.name}",
                            "no signature that those keys verify", "signed by another key, or altered")  # fmt: skip
        self.equal(f".att {predicate_type} payloadType", IN_TOTO_PAYLOAD, payload_type)
        document: dict[str, Any] = json.loads(payload)
        self.equal(f"{predicate_type} _type", STATEMENT_TYPE, document.get("_type"))
        self.equal(f"{predicate_type} predicateType", predicate_type, document.get("predicateType"))
        subjects = document.get("subject") or [{}]
        self.equal(f"{predicate_type} subject[0].digest.sha256", self.target.digest.partition(":")[2],
                   (subjects[0].get("digest") or {}).get("sha256"), "an attestation of another image")  # fmt: skip
        self.equal(f"{predicate_type} subject[0].name", self.repository, subjects[0].get("name"))
        predicate: dict[str, Any] = document.get("predicate") or {}
        return predicate

    def provenance(self, predicate: dict[str, Any]) -> CheckedProvenance:
        policy = self.policy.policy
        builder = str(((predicate.get("runDetails") or {}).get("builder") or {}).get("id"))
        self.equal("provenance runDetails.builder.id", policy.builder_id, builder)
        definition = predicate.get("buildDefinition") or {}
        workflow = (definition.get("externalParameters") or {}).get("workflow") or {}
        self.equal("provenance externalParameters.workflow.repository", policy.source_repository,
                   workflow.get("repository"))  # fmt: skip
        self.equal("provenance externalParameters.workflow.path", policy.workflow, workflow.get("path"))
        ref = str(workflow.get("ref"))
        if not policy.ref_allowed(ref):
            raise self.fail("provenance externalParameters.workflow.ref", f"a ref matching {policy.ref_pattern}", ref)
        commits = [
            str((d.get("digest") or {}).get("gitCommit"))
            for d in definition.get("resolvedDependencies") or []
            if str(d.get("uri", "")).startswith(f"git+{policy.source_repository}@")
        ]
        if not commits or not re.fullmatch(r"[0-9a-f]{40}", commits[0]):
            raise self.fail("provenance resolvedDependencies git commit", f"git+{policy.source_repository} at a "
                            "40-hex commit", commits[0] if commits else "none")  # fmt: skip
        variant = str((definition.get("externalParameters") or {}).get("variant"))
        dependencies = definition.get("resolvedDependencies") or []
        try:
            inputs, base = checked_inputs(self.policy.path.parent, variant, dependencies, policy.source_repository)
        except InputMismatchError as mismatch:
            raise VerificationFailedError(self.image, self.target.digest, mismatch.reason, inputs_fix()) from None
        return CheckedProvenance(builder, ref, commits[0], variant, base.uri, len(inputs.locks))


@dataclass(frozen=True)
class CheckedProvenance:
    """What the provenance says, as checked: who built it from which ref and commit, on which base, from how many
    of this checkout's locks."""

    builder_id: str
    source_ref: str
    commit: str
    variant: str
    base: str  # docker://REPO@sha256:MANIFEST
    locks: int
    keyless: ProvenBuilder | None = None  # the builder proven by its keyless attestation; None: unproven


class ReferenceRuleError(UserError):
    """`verify REPO` with neither tag nor digest: nothing for the index to bind. Exit status 2."""


def signed(image: str, policy: LoadedPolicy) -> tuple[_Check, str, dict[str, Any], CheckedProvenance]:
    """Steps 1-3 (repository, signature, attestations, the keyless builder) of `image`; promote runs them before a
    tag moves."""
    ref = reference(image)
    if ref.repository != policy.policy.repository:
        why = f"{policy.path.name} covers one repository"
        reason = Reason("repository", policy.policy.repository, ref.repository, why)
        raise VerificationFailedError(image, ref.digest or "not resolved", reason)
    client, target = open_image(image)
    check = _Check(image, policy, client, target)
    keyid = check.signature()
    layers = check.attachment("att").get("layers") or []
    sbom = check.statement(layers, SBOM_PREDICATE)
    check.equal("SBOM predicate bomFormat", "CycloneDX", sbom.get("bomFormat"))
    built = check.provenance(check.statement(layers, PROVENANCE_PREDICATE))
    keyless = prove_builder(check.client, image, check.target.digest, policy, commit=built.commit, ref=built.source_ref)
    return check, keyid, sbom, replace(built, keyless=keyless)


def _bound(check: _Check, targets: dict[str, str], tag: str | None, digest: str | None) -> tuple[str, ...]:
    """The one reference rule: REPO:TAG, the tag's binding is the digest served; REPO:TAG@DIGEST, the tag's
    binding is that digest; REPO@DIGEST, some tag is bound to it. The tags bound to the digest."""
    served = check.target.digest
    if tag is not None:
        field, bound = f'release-index targets["{tag}"]', targets.get(tag)
        if bound is None:
            raise check.fail(field, "a release tag bound to a digest", "no such tag", "not a release tag")
        if digest is not None and bound != digest:
            raise check.fail(field, bound, digest, f"the reference's @digest is not the one {tag} is bound to "
                             "(an older or another release under a current tag's name)")  # fmt: skip
        check.equal(field, bound, served, "the tag was moved to another image (a rollback or a swap)")
    tags = tuple(sorted(t for t, d in targets.items() if d == served))
    if not tags:
        raise check.fail("release-index targets", "a tag bound to this digest", "none",
                         "this digest is not, or no longer, a release")  # fmt: skip
    return tags


def verify_image(image: str, policy: LoadedPolicy) -> Verified:
    ref = reference(image)
    if ref.tag is None and ref.digest is None:
        raise ReferenceRuleError(
            cause=f"{image} names neither a tag nor a digest: verify never assumes :latest, and the release index "
            "binds tags to digests",
            fix="verify REPO:TAG (the digest the index binds the tag to), REPO:TAG@sha256:D (the index must bind "
            "the tag to that digest) or REPO@sha256:D (a digest some release tag is bound to)",
        )
    check, keyid, sbom, built = signed(image, policy)
    files = release_index.fetch(check.client, ref.repository, policy.policy.index_tag).files
    try:
        version, targets = trusted_targets(files, policy)
    except IndexFailureError as failure:
        fix = failure.fix or FIX
        raise VerificationFailedError(image, check.target.digest, failure.reason, fix) from failure
    tags = _bound(check, targets, ref.tag, ref.digest)
    components = len(sbom.get("components") or [])
    digest = check.target.digest
    return Verified(image, digest, tags, keyid, components, built, version)
