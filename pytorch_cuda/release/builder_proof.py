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
from pytorch_cuda.oci.registry_client import RegistryAccessError, RegistryClient, RegistryManifest, reference
from pytorch_cuda.release.cosign_layout import tag_for
from pytorch_cuda.release.failures import Reason, VerificationFailedError
from pytorch_cuda.release.release_policy import LoadedPolicy

if TYPE_CHECKING:  # sigstore is imported only where a policy names a keyless builder (0.1-0.2 s)
    from pytorch_cuda.release.keyless_builder import ProvenBuilder

BUNDLE_TYPE = "application/vnd.dev.sigstore.bundle"  # v0.3: ...bundle.v0.3+json; v0.2: ...bundle+json;version=0.2
MOST_BUNDLES = 16  # referrers read per digest: an attacker may list many
UNPROVEN = "builder unproven: the policy names no keyless_builder, so the line above is the release key holder's claim"
KEYLESS_FIX = (
    "do not use this image: nothing shows that the release workflow built it (an image signed with the release "
    "key elsewhere, e.g. on a laptop, is refused here by design). A release is attested by release.yml's "
    "actions/attest-build-provenance step (push-to-registry: true), which stores a Sigstore bundle as a referrer of "
    "the digest (on GHCR, in the sha256-<hex> tag's index); if the publisher says its workflow did attest this "
    "digest, the bundle was lost on the way (a copy that leaves the referrers behind): pull the release from the "
    "registry it was published to, or ask the publisher to run the release again"
)


def _bundle_manifests(client: RegistryClient, repository: str, digest: str) -> list[str]:
    """The digests of the referrers of `digest` that say they are Sigstore bundles (API and tag, at most 16)."""
    listed: list[dict[str, Any]] = []
    tagged = client.manifest(f"{repository}:{tag_for(digest, '')}")
    for raw in (client.referrers_api(repository, digest), tagged.raw if tagged else None):
        if raw is not None:
            try:
                listed += [m for m in json.loads(raw).get("manifests") or [] if isinstance(m, dict)]
            except (ValueError, AttributeError):
                continue
    found = [str(m.get("digest")) for m in listed if str(m.get("artifactType", "")).startswith(BUNDLE_TYPE)]
    found = [d for d in found if re.fullmatch(r"sha256:[0-9a-f]{64}", d)]
    return list(dict.fromkeys(found))[:MOST_BUNDLES]


def _bundle(client: RegistryClient, repository: str, manifest: RegistryManifest) -> bytes:
    layers = [l for l in json.loads(manifest.raw).get("layers") or [] if isinstance(l, dict)]  # noqa: E741
    chosen = [l for l in layers if str(l.get("mediaType", "")).startswith(BUNDLE_TYPE)]  # noqa: E741
    if len(chosen) != 1:
        raise ValueError(f"{len(chosen)} Sigstore bundle layers")
    return client.blob(reference(repository), str(chosen[0].get("digest")), limit=1 << 20)


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
    for candidate in candidates:
        try:
            manifest = client.manifest(f"{repository}@{candidate}")
            if manifest is None or manifest.digest != candidate:
                raise ValueError("the registry does not serve it")
            proven = verify_bundle(_bundle(client, repository, manifest), digest, identity, root)
        except (ValueError, AttributeError, RegistryAccessError, KeylessRefusalError) as refused:
            refusals.append(f"{candidate[:19]}…: {refused.cause if isinstance(refused, UserError) else refused}")
            continue
        if (proven.commit, proven.source_ref) != (commit, ref):
            refusals.append(f"{candidate[:19]}…: keyless certificate commit and ref: expected {commit} at {ref} "
                            f"(the provenance's), found {proven.commit} at {proven.source_ref}")  # fmt: skip
            continue
        return proven
    expected = (f"a Sigstore bundle among the referrers of this digest, by {identity.signer(p.ref_pattern)} "
                f"(issuer {keyless.issuer}), verified against {keyless.trusted_root}, whose SLSA provenance's "
                "subject is this digest")  # fmt: skip
    found = f"{len(candidates)} bundle(s), none verifies: {'; '.join(refusals)}"
    why = "not the release build"
    if not candidates:
        found = "no Sigstore bundle (neither the referrers API nor the sha256-<hex> tag lists one)"
        why = "not attested by the release workflow: signed elsewhere, or its attestation was left behind"
    reason = Reason("keyless builder (release-policy.yaml keyless_builder)", expected, found, why)
    raise VerificationFailedError(image, digest, reason, KEYLESS_FIX)
