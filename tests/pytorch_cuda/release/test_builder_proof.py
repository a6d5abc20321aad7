"""builder_proof.py, the keyless step of verify, over a registry that serves what the referrers tag lists: the real
bundle (tests/fixtures/sigstore) proves its builder under a policy naming that builder, from the commit and ref the
provenance names; another commit, no bundle, or a bundle manifest the registry does not serve is refused; a
policy naming no keyless builder proves nothing. The loopback registry's own tests: test_release_keyless.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import cast

import pytest
import yaml

from pytorch_cuda.oci.registry_client import (
    MOST_MANIFEST_BYTES,
    BlobTooLargeError,
    ManifestTooLargeError,
    RegistryClient,
    RegistryManifest,
)
from pytorch_cuda.release.builder_proof import (
    KEYLESS_FIX,
    MOST_CANDIDATE_BYTES,
    MOST_CANDIDATES,
    TooManyReferrersError,
    prove_builder,
)
from pytorch_cuda.release.failures import VerificationFailedError
from pytorch_cuda.release.keyless_builder import ProvenBuilder
from pytorch_cuda.release.release_policy import LoadedPolicy, ReleasePolicy
from tests.support.integration import ROOT

BUNDLE = (ROOT / "tests" / "fixtures" / "sigstore" / "reusable-workflow-attestation.sigstore.json").read_bytes()
SUBJECT = "sha256:07e4b8c0e3580b3e4a1eb62c70f1ffb86004d3d94f50767cb404fa7a639b4d05"
COMMIT = "8304c42402aa3a569882687e0642c359e5a74ac2"
REPOSITORY = "127.0.0.1:5000/demo/attest-demo"
BUNDLE_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Registry:
    """What a registry without the referrers API serves: the `sha256-<hex>` index, manifests and blobs."""

    def __init__(self, bundles: list[bytes], *, api: bool = False, lie: bool = False) -> None:
        self.manifests: dict[str, bytes] = {}
        self.served = 0  # bytes of candidate manifests and bundles handed out, as a capped client reads them
        self.blobs = {sha(b): b for b in bundles}
        listed = []
        for bundle in bundles:
            size = min(len(bundle), 1 << 10) if lie else len(bundle)  # `lie`: a large bundle declared small
            layer = {"mediaType": BUNDLE_TYPE, "digest": sha(bundle), "size": size}
            raw = json.dumps({"schemaVersion": 2, "artifactType": BUNDLE_TYPE, "layers": [layer]}).encode()
            self.manifests[f"{REPOSITORY}@{sha(raw)}"] = raw
            listed.append({"digest": sha(raw), "artifactType": BUNDLE_TYPE, "size": len(raw)})
        index = json.dumps({"schemaVersion": 2, "manifests": listed}).encode()
        self.api = index if api else None  # a registry with the referrers API lists them there, not in a tag
        if not api:
            self.manifests[f"{REPOSITORY}:{SUBJECT.replace(':', '-')}"] = index

    def manifest(self, text: str, limit: int = MOST_MANIFEST_BYTES) -> RegistryManifest | None:
        raw = self.manifests.get(text)
        if raw is not None and "@" in text:
            self.served += min(len(raw), limit + 1)
        if raw is not None and len(raw) > limit:
            raise ManifestTooLargeError(cause=f"the manifest of {text} is larger than {limit}", fix="-")
        return None if raw is None else RegistryManifest(text, "application/vnd.oci.image.manifest.v1+json", raw)

    def referrers_api(self, text: str, digest: str) -> bytes | None:
        return self.api if digest == SUBJECT else None

    def blob(self, ref: object, digest: str, limit: int = 0) -> bytes:
        self.served += min(len(self.blobs[digest]), limit + 1)
        if len(self.blobs[digest]) > limit:
            raise BlobTooLargeError(cause=f"blob {digest} is larger than {limit}", fix="-")
        return self.blobs[digest]


def policy(tmp_path: Path, keyless: bool = True) -> LoadedPolicy:
    """The committed policy, naming the fixture's builder (or none)."""
    data = yaml.safe_load((ROOT / "release-policy.yaml").read_text())
    data.update(source_repository="https://github.com/malancas/attest-demo", workflow=".github/workflows/shared.yml",
                ref_pattern="refs/heads/main", repository=REPOSITORY)  # fmt: skip
    data["keyless_builder"].update(signer_workflow="bdehamer/workflows/.github/workflows/attest.yml",
                                   trusted_root=str(ROOT / "keys" / "sigstore-trusted-root.json"))  # fmt: skip
    if not keyless:
        data["keyless_builder"] = None
    return LoadedPolicy(tmp_path / "release-policy.yaml", ReleasePolicy.model_validate(data), ())


def prove(registry: Registry, loaded: LoadedPolicy, commit: str = COMMIT) -> ProvenBuilder | None:
    client = cast(RegistryClient, registry)
    return prove_builder(client, f"{REPOSITORY}@{SUBJECT}", SUBJECT, loaded, commit=commit, ref="refs/heads/main")


def refused(registry: Registry, loaded: LoadedPolicy, commit: str = COMMIT) -> VerificationFailedError:
    with pytest.raises(VerificationFailedError) as failed:
        prove(registry, loaded, commit)
    assert failed.value.fix == KEYLESS_FIX.rstrip(".")
    assert failed.value.reason.field == "keyless builder (release-policy.yaml keyless_builder)"
    return failed.value


def test_the_bundle_among_the_referrers_proves_the_builder(tmp_path: Path) -> None:
    proven = prove(Registry([b"{}", BUNDLE]), policy(tmp_path))  # a broken bundle first: the next one counts
    assert proven is not None
    assert proven.signer == ("https://github.com/bdehamer/workflows/.github/workflows/attest.yml@refs/heads/main")


def test_the_referrers_api_s_listing_is_read_too(tmp_path: Path) -> None:
    proven = prove(Registry([BUNDLE], api=True), policy(tmp_path))
    assert proven is not None
    assert proven.commit == COMMIT


def test_a_provenance_naming_another_commit_is_refused(tmp_path: Path) -> None:
    found = refused(Registry([BUNDLE]), policy(tmp_path), commit="f" * 40).reason.found
    assert found.startswith("1 bundle(s), none verifies: sha256:")
    assert found.endswith(f"keyless certificate commit and ref: expected {'f' * 40} at refs/heads/main (the "
                          f"provenance's), found {COMMIT} at refs/heads/main")  # fmt: skip


def test_no_bundle_is_refused_naming_what_is_missing(tmp_path: Path) -> None:
    failure = refused(Registry([]), policy(tmp_path))
    assert failure.reason.found == ("no Sigstore bundle (neither the referrers API nor the sha256-<hex> tag lists one)")
    assert "by https://github.com/bdehamer/workflows/.github/workflows/attest.yml@refs/heads/main" in (
        failure.reason.expected
    )


def test_a_listed_bundle_the_registry_does_not_serve_is_refused(tmp_path: Path) -> None:
    registry = Registry([BUNDLE])
    registry.manifests = {k: v for k, v in registry.manifests.items() if "@" not in k}
    assert "the registry does not serve it" in refused(registry, policy(tmp_path)).reason.found


def test_a_policy_naming_no_keyless_builder_proves_nothing(tmp_path: Path) -> None:
    assert prove(Registry([]), policy(tmp_path, keyless=False)) is None


def junk(count: int, size: int = 0) -> list[bytes]:
    """Bundles that are not (distinct, so each is a candidate of its own), `size` bytes of padding each."""
    return [json.dumps({"junk": n, "pad": "x" * size}).encode() for n in range(count)]


def test_the_real_bundle_is_found_behind_every_junk_one_the_cap_allows(tmp_path: Path) -> None:
    registry = Registry([*junk(MOST_CANDIDATES - 1), BUNDLE])  # more junk than the 16 read before, listed first
    proven = prove(registry, policy(tmp_path))
    assert proven is not None
    assert proven.commit == COMMIT


def test_a_thousand_junk_referrers_before_the_real_one_are_too_many_candidates(tmp_path: Path) -> None:
    registry = Registry([*junk(1000), BUNDLE], api=True)
    with pytest.raises(TooManyReferrersError) as refused:
        prove(registry, policy(tmp_path))
    assert refused.value.exit_status == 1
    assert refused.value.reason.field == "keyless builder referrers (release-policy.yaml keyless_builder)"
    assert refused.value.reason.found == (f"1001 Sigstore bundle referrers listed, more than the {MOST_CANDIDATES} "
                                          "examined: none read")  # fmt: skip
    assert refused.value.reason.why.startswith("too many candidates")
    assert registry.served == 0  # no candidate was read: junk is never chosen, and nothing unbounded is read


def test_large_junk_candidates_are_read_within_the_total_cap(tmp_path: Path) -> None:
    registry = Registry([*junk(MOST_CANDIDATES - 1, size=(1 << 20) - 64), BUNDLE])  # each just under its own cap
    proven = prove(registry, policy(tmp_path))  # those declared larger than what is left are refused unread
    assert proven is not None
    assert registry.served <= MOST_CANDIDATE_BYTES


def test_large_junk_candidates_declared_small_stop_at_the_total_cap(tmp_path: Path) -> None:
    registry = Registry([*junk(MOST_CANDIDATES - 1, size=(1 << 20) - 64), BUNDLE], lie=True)
    with pytest.raises(TooManyReferrersError) as refused:
        prove(registry, policy(tmp_path))
    found = refused.value.reason.found
    assert found == (f"{MOST_CANDIDATES} Sigstore bundle referrers whose manifests and bundles add up to more than "
                     f"{MOST_CANDIDATE_BYTES} bytes; read no further")  # fmt: skip
    assert registry.served <= MOST_CANDIDATE_BYTES + 64


def test_a_candidate_declared_larger_than_its_cap_is_not_read(tmp_path: Path) -> None:
    registry = Registry([BUNDLE])
    listing_tag = f"{REPOSITORY}:{SUBJECT.replace(':', '-')}"
    index = json.loads(registry.manifests[listing_tag])
    index["manifests"][0]["size"] = 10 << 30
    registry.manifests[listing_tag] = json.dumps(index).encode()
    assert "the listing declares 10737418240 bytes, more than the 65536 allowed: not read" in (
        refused(registry, policy(tmp_path)).reason.found
    )
    assert registry.served == 0
