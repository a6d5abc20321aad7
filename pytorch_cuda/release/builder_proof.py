"""Step 3b of verify (and of promote): the builder, proven by the keyless attestation the release workflow pushed.

release.yml's actions/attest-build-provenance (`push-to-registry: true`) stores its Sigstore bundle as an OCI
referrer of the image digest: a manifest whose `artifactType` and one layer are
`application/vnd.dev.sigstore.bundle.v0.3+json`, with `subject` the image, listed by the registry's referrers API
or, where there is none (GHCR, Distribution 2.8), in the referrers tag schema's index at `sha256-<hex>` (the index
`sign` also writes; it keeps entries of other artifact types). The listing and the manifests are unsigned: they
only say where to look. Each bundle found is verified (keyless_builder.py); the first that proves the policy's
builder, for this digest, from the commit and ref the key-signed provenance names, is the proof.

When release-policy.yaml's `keyless_builder` is null the step proves nothing and says so; when it names one and no
bundle proves it, verify (and promote) refuse with exit 1.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from pytorch_cuda.errors import UserError
from pytorch_cuda.oci.registry_client import (
    RegistryAccessError,
    RegistryClient,
    RegistryManifest,
    ResponseTooLargeError,
    reference,
)
from pytorch_cuda.release.cosign_layout import tag_for
from pytorch_cuda.release.failures import Reason, VerificationFailedError
from pytorch_cuda.release.release_policy import LoadedPolicy

if TYPE_CHECKING:  # sigstore is imported only where a policy names a keyless builder (0.1-0.2 s)
    from pytorch_cuda.release.keyless_builder import ProvenBuilder

BUNDLE_TYPE = "application/vnd.dev.sigstore.bundle"  # v0.3: ...bundle.v0.3+json; v0.2: ...bundle+json;version=0.2
MOST_CANDIDATES = 64  # Sigstore bundle referrers examined per digest: more is refused, never a chosen few
MOST_CANDIDATE_BYTES = 16 << 20  # their manifests and bundles together
MOST_BUNDLE_MANIFEST_BYTES = 64 << 10  # one bundle's manifest (about 1 KiB as attest-build-provenance writes it)
MOST_BUNDLE_BYTES = 1 << 20  # one bundle (about 10 KiB)
UNPROVEN = "builder unproven: the policy names no keyless_builder, so the line above is the release key holder's claim"
KEYLESS_FIX = (
    "do not use this image: nothing shows that the release workflow built it (an image signed with the release "
    "key elsewhere, e.g. on a laptop, is refused here by design). A release is attested by release.yml's "
    "actions/attest-build-provenance step (push-to-registry: true), which stores a Sigstore bundle as a referrer of "
    "the digest (on GHCR, in the sha256-<hex> tag's index); if the publisher says its workflow did attest this "
    "digest, the bundle was lost on the way (a copy that leaves the referrers behind): pull the release from the "
    "registry it was published to, or ask the publisher to run the release again"
)


class TooManyReferrersError(VerificationFailedError):
    """More Sigstore bundle candidates are listed for a digest than MOST_CANDIDATES, or they add up to more than
    MOST_CANDIDATE_BYTES: none is chosen, whatever its place in the listing. Exit status 1."""


def _bundle_manifests(client: RegistryClient, repository: str, digest: str) -> dict[str, int | None]:
    """The referrers of `digest` that say they are Sigstore bundles (API and tag), with the size each listing
    declares for it (None when it declares none)."""
    listed: list[dict[str, Any]] = []
    tagged = client.manifest(f"{repository}:{tag_for(digest, '')}")
    for raw in (client.referrers_api(repository, digest), tagged.raw if tagged else None):
        if raw is not None:
            try:
                listed += [m for m in json.loads(raw).get("manifests") or [] if isinstance(m, dict)]
            except (ValueError, AttributeError):
                continue
    found: dict[str, int | None] = {}
    for m in listed:
        candidate, size = str(m.get("digest")), m.get("size")
        if str(m.get("artifactType", "")).startswith(BUNDLE_TYPE) and re.fullmatch(r"sha256:[0-9a-f]{64}", candidate):
            declared = size if isinstance(size, int) and not isinstance(size, bool) else None
            if found.get(candidate) is None:
                found[candidate] = declared
    return found


def _bundle(client: RegistryClient, repository: str, manifest: RegistryManifest, limit: int) -> bytes:
    layers = [l for l in json.loads(manifest.raw).get("layers") or [] if isinstance(l, dict)]  # noqa: E741
    chosen = [l for l in layers if str(l.get("mediaType", "")).startswith(BUNDLE_TYPE)]  # noqa: E741
    if len(chosen) != 1:
        raise ValueError(f"{len(chosen)} Sigstore bundle layers")
    size = chosen[0].get("size")
    if isinstance(size, int) and size > limit:
        raise ValueError(f"its bundle declares {size} bytes, more than the {limit} left to read: not read")
    return client.blob(reference(repository), str(chosen[0].get("digest")), limit=limit)


def prove_builder(
    client: RegistryClient, image: str, digest: str, policy: LoadedPolicy, *, commit: str, ref: str
) -> ProvenBuilder | None:
    """The keyless proof that the policy's builder built `digest` from `commit` at `ref` (the key-signed
    provenance's), or None when the policy names no keyless builder."""
    keyless = policy.policy.keyless_builder
    if keyless is None:
        return None
    from pytorch_cuda.release.keyless_builder import (
        BuilderIdentity,
        KeylessRefusalError,
        load_sigstore_root,
        verify_bundle,
    )

    root = load_sigstore_root(policy.path.parent / keyless.trusted_root)
    p = policy.policy
    identity = BuilderIdentity(p.source_repository, p.workflow, p.ref_pattern, keyless.signer_workflow, keyless.issuer)
    repository = reference(image).repository
    refusals: list[str] = []
    candidates = _bundle_manifests(client, repository, digest)
    expected = (f"a Sigstore bundle among the referrers of this digest, by {identity.signer(p.ref_pattern)} "
                f"(issuer {keyless.issuer}), verified against {keyless.trusted_root}, whose SLSA provenance's "
                "subject is this digest")  # fmt: skip
    too_many = "too many candidates: a listing padded with junk, so none is chosen by its place in it"
    if len(candidates) > MOST_CANDIDATES:
        found = f"{len(candidates)} Sigstore bundle referrers listed, more than the {MOST_CANDIDATES} examined: "
        found += "none read"
        reason = Reason("keyless builder referrers (release-policy.yaml keyless_builder)", expected, found, too_many)
        raise TooManyReferrersError(image, digest, reason, KEYLESS_FIX)
    budget = MOST_CANDIDATE_BYTES
    for candidate, declared in candidates.items():
        if budget <= 0:
            found = (f"{len(candidates)} Sigstore bundle referrers whose manifests and bundles add up to more than "
                     f"{MOST_CANDIDATE_BYTES} bytes; read no further")  # fmt: skip
            reason = Reason("keyless builder referrers (release-policy.yaml keyless_builder)", expected, found,
                            too_many)  # fmt: skip
            raise TooManyReferrersError(image, digest, reason, KEYLESS_FIX)
        limit = min(MOST_BUNDLE_MANIFEST_BYTES, budget)
        try:
            if declared is not None and declared > limit:
                raise ValueError(f"the listing declares {declared} bytes, more than the {limit} allowed: not read")
            manifest = client.manifest(f"{repository}@{candidate}", limit=limit)
            if manifest is None or manifest.digest != candidate:
                raise ValueError("the registry does not serve it")
            budget -= len(manifest.raw)
            limit = min(MOST_BUNDLE_BYTES, budget)
            bundle = _bundle(client, repository, manifest, limit)
            budget -= len(bundle)
            proven = verify_bundle(bundle, digest, identity, root)
        except (ValueError, AttributeError, RegistryAccessError, KeylessRefusalError) as refused:
            if isinstance(refused, ResponseTooLargeError):
                budget -= limit  # read up to its cap before it was refused
            refusals.append(f"{candidate[:19]}…: {refused.cause if isinstance(refused, UserError) else refused}")
            continue
        if (proven.commit, proven.source_ref) != (commit, ref):
            refusals.append(f"{candidate[:19]}…: keyless certificate commit and ref: expected {commit} at {ref} "
                            f"(the provenance's), found {proven.commit} at {proven.source_ref}")  # fmt: skip
            continue
        return proven
    found = f"{len(candidates)} bundle(s), none verifies: {'; '.join(refusals)}"
    why = "not the release build"
    if not candidates:
        found = "no Sigstore bundle (neither the referrers API nor the sha256-<hex> tag lists one)"
        why = "not attested by the release workflow: signed elsewhere, or its attestation was left behind"
    reason = Reason("keyless builder (release-policy.yaml keyless_builder)", expected, found, why)
    raise VerificationFailedError(image, digest, reason, KEYLESS_FIX)
