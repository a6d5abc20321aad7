"""A release you can verify, on the loopback registry (127.0.0.1:5000) with small images pushed there: the tested
digest is promoted to the release tags byte for byte, signed and attested in cosign's layout and bound in the
signed release index, and `build.py release verify` passes on it and fails on a tag moved to an unsigned image
(the attacks on a release are test_release_attacks.py)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

import pytest
import requests

from pytorch_cuda.release.promote import PromotionMismatchError, promote
from pytorch_cuda.release.release_policy import load_policy
from tests.support import local_registry as registry
from tests.support.release_checkout import Checkout, folded, pushed_candidates, skopeo_copy

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Release:
    checkout: Checkout  # its release-policy.yaml covers the repository
    tested: str  # the digest "conformance tested" (the candidate push's)
    other: str  # another image's digest in the same repository, never signed

    @property
    def repository(self) -> str:  # 127.0.0.1:5000/ci/release-test-xxxx
        return self.checkout.repository

    @property
    def path(self) -> str:  # the repository without the registry host
        return self.checkout.path


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    checkout, (tested, other) = pushed_candidates(tmp_path_factory, "tested", "other")
    checkout = checkout.as_typed()  # here `build.py release` runs as a user types it; in-process elsewhere
    repository = checkout.repository
    checkout.sign(f"{repository}@{tested}", "release", "v9.9", "v9.9-runtime")  # sign before promote
    promoted = checkout.release("promote", f"{repository}@{tested}", "--tag", "v9.9", "--tag", "v9.9-runtime")
    assert promoted.returncode == 0, promoted.stderr
    return Release(checkout, tested, other)


def test_the_release_tags_serve_the_tested_manifest_byte_for_byte(release: Release) -> None:
    tested = registry.manifest(release.path, release.tested)
    for tag in ("v9.9", "v9.9-runtime"):
        served = registry.manifest(release.path, tag)
        assert (served.digest, served.served_digest) == (release.tested, release.tested)
        assert served.body == tested.body


def test_promotion_fails_when_a_tag_serves_other_bytes(release: Release) -> None:
    """A copy that re-encodes the manifest (the OCI candidate as Docker's v2s2, as a converting proxy would) is
    caught."""

    def converting_copy(argv: list[str]) -> subprocess.CompletedProcess[str]:
        converted = [arg for arg in argv if arg != "--preserve-digests"]
        return subprocess.run([*converted[:2], "--format", "v2s2", *converted[2:]], capture_output=True, text=True)

    release.checkout.sign(f"{release.repository}@{release.tested}", "release", "v9.9-converted")  # bound first
    policy = load_policy(release.checkout.folder / "release-policy.yaml")
    with pytest.raises(PromotionMismatchError) as caught:
        promote(f"{release.repository}@{release.tested}", ["v9.9-converted"], policy, run=converting_copy)
    served = registry.manifest(release.path, "v9.9-converted").digest
    assert served != release.tested
    assert f"serves {served}, not the tested manifest {release.tested}" in caught.value.cause
    assert caught.value.exit_status == 1


def test_promotion_refuses_a_tag_as_the_tested_image(release: Release) -> None:
    refused = release.checkout.release("promote", f"{release.repository}:candidate-tested", "--tag", "v9.9")
    assert refused.returncode == 2
    assert "is not pinned by digest" in refused.stderr


def test_verify_passes_on_the_promoted_tag(release: Release) -> None:
    verified = release.checkout.release("verify", f"{release.repository}:v9.9-runtime", "--json")
    assert verified.returncode == 0, verified.stderr
    found = json.loads(verified.stdout)
    assert found["digest"] == release.tested
    assert {"v9.9", "v9.9-runtime"} <= set(found["tags"]) <= {"v9.9", "v9.9-runtime", "v9.9-converted"}
    assert (found["sbom_components"], found["commit"]) == (1, "a" * 40)


def test_promote_refuses_an_unsigned_candidate_and_moves_no_tag(release: Release) -> None:
    """Sign before promote: the tags move only once the tested digest is signed and attested (a missing key in
    release.yml fails the sign step, before this one)."""
    refused = release.checkout.release("promote", f"{release.repository}@{release.other}", "--tag", "v9.9-unsigned")
    assert refused.returncode == 1, refused.stderr
    text = folded(refused.stderr)
    assert f"{release.repository}@{release.other} is not signed and attested as release-policy.yaml requires, " in text
    assert "so no tag was moved: .sig: expected" in text
    missing = requests.get(
        f"http://{registry.REGISTRY_HOST}/v2/{release.path}/manifests/v9.9-unsigned",
        headers={"Accept": registry.MANIFEST_TYPES}, timeout=30,
    )  # fmt: skip
    assert missing.status_code == 404


def test_verify_fails_on_a_tag_moved_to_an_unsigned_image(release: Release) -> None:
    skopeo_copy(f"{release.repository}@{release.other}", f"{release.repository}:v9.9-moved")  # by whoever can push
    failed = release.checkout.release("verify", f"{release.repository}:v9.9-moved")
    assert failed.returncode == 1
    text = folded(failed.stderr)
    sig = f"{release.repository}:{release.other.replace(':', '-')}.sig"
    assert f"(digest {release.other}) failed verification: .sig: expected {sig} (cosign's sig of this digest)" in text
    assert "found nothing" in text


def test_verify_of_another_repository_than_the_policy_s_exits_1_before_any_registry_call(release: Release) -> None:
    failed = release.checkout.release("verify", "127.0.0.1:1/elsewhere/pytorch-cuda:v9.9")
    assert failed.returncode == 1
    assert f"repository: expected {release.repository}, found 127.0.0.1:1/elsewhere/pytorch-cuda" in folded(
        failed.stderr
    )


def test_the_registry_serves_cosign_s_layout_and_the_referrers_tag_lists_it(release: Release) -> None:
    """As cosign and oras read it: `.sig` and `.att` by tag (cosign's discovery), and the OCI distribution spec's
    referrers tag schema (`sha256-<hex>`, an image index of descriptors with artifactType) for `oras discover` on a
    registry without the referrers API, as Distribution 2.8 here (and GHCR)."""
    base = release.tested.replace(":", "-")
    sig = registry.manifest(release.path, f"{base}.sig")
    att = registry.manifest(release.path, f"{base}.att")
    for served in (sig, att):
        assert served.body["subject"]["digest"] == release.tested
        assert served.body["config"]["mediaType"] == "application/vnd.oci.image.config.v1+json"
        assert registry.blob_digest(release.path, served.config_digest)[0] == served.config_digest
    (layer,) = sig.layers
    assert layer["mediaType"] == "application/vnd.dev.cosign.simplesigning.v1+json"
    assert list(layer["annotations"]) == ["dev.cosignproject.cosign/signature"]
    assert sig.body["artifactType"] == "application/vnd.dev.cosign.artifact.sig.v1+json"
    assert [(layer["mediaType"], layer["annotations"]) for layer in att.layers] == [
        ("application/vnd.dsse.envelope.v1+json",
         {"dev.cosignproject.cosign/signature": "", "predicateType": predicate})
        for predicate in ("https://cyclonedx.org/bom", "https://slsa.dev/provenance/v1")
    ]  # fmt: skip
    referrers = registry.manifest(release.path, base)
    assert referrers.body["mediaType"] == "application/vnd.oci.image.index.v1+json"
    listed = {(d["mediaType"], d["digest"], d["size"], d["artifactType"]) for d in referrers.body["manifests"]}
    oci = "application/vnd.oci.image.manifest.v1+json"
    assert listed == {
        (oci, sig.digest, served_size(release.path, sig.digest), "application/vnd.dev.cosign.artifact.sig.v1+json"),
        (oci, att.digest, served_size(release.path, att.digest), "application/vnd.dsse.envelope.v1+json"),
    }


def served_size(path: str, digest: str) -> int:
    response = requests.get(
        f"http://{registry.REGISTRY_HOST}/v2/{path}/manifests/{digest}",
        headers={"Accept": registry.MANIFEST_TYPES},
        timeout=30,
    )
    response.raise_for_status()
    return len(response.content)
