"""Attack 4 of issue 39, self-asserted provenance, on the loopback registry: an image signed with the release key on
a laptop, with a made-up commit and a provenance saying "built by .../release.yml", is refused once the policy
requires the keyless builder (the committed policy does); the same image verifies under a policy naming none, and
verify says the builder is unproven. A real bundle of another project (tests/fixtures/sigstore), attached as the
digest's referrer as actions/attest-build-provenance attaches one, is refused: its identity is another workflow's,
and where the policy names that workflow, its subject is another artifact."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import requests

from pytorch_cuda.release.cosign_layout import OCI_INDEX
from tests.support import local_registry as registry
from tests.support.keyless_bundle import BUNDLE, BUNDLE_TYPE, attach_bundle, put_manifest
from tests.support.measured_verify import measured_verify
from tests.support.release_checkout import (
    OCI_MANIFEST,
    Checkout,
    folded,
    make_checkout,
    skopeo_copy,
    without_keyless_builder,
)
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration

FOREIGN_SUBJECT = "07e4b8c0e3580b3e4a1eb62c70f1ffb86004d3d94f50767cb404fa7a639b4d05"
SIGNER = "https://github.com/pytorch-cuda/pytorch-cuda/.github/workflows/release.yml@refs/tags/v*"


def unproven_policy(checkout: Checkout) -> Path:
    """The checkout's policy with `keyless_builder: null`, beside it (its keys and root are read from there)."""
    path = checkout.folder / "release-policy-unproven.yaml"
    path.write_text(without_keyless_builder((checkout.folder / "release-policy.yaml").read_text()))
    return path


@pytest.fixture(scope="module")
def laptop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Checkout, str]:
    """A checkout requiring the committed keyless builder; an image signed and bound to v9.9 with the file key,
    its provenance claiming release.yml at refs/tags/v9.9.0 and a made-up commit (the image's label, 'a' * 40)."""
    registry.require_registry()
    checkout = make_checkout(tmp_path_factory.mktemp("keyless") / "checkout", unique_repository(), keyless=True)
    digest = checkout.candidate("candidate", "a" * 40)
    skopeo_copy(f"{checkout.repository}@{digest}", f"{checkout.repository}:v9.9")
    checkout.sign(f"{checkout.repository}@{digest}", "release", "v9.9")
    return checkout, digest


def test_self_asserted_provenance_is_refused_when_the_policy_requires_the_keyless_builder(
    laptop: tuple[Checkout, str],
) -> None:
    checkout, digest = laptop
    failed = checkout.release("verify", f"{checkout.repository}:v9.9")
    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    text = folded(failed.stderr)
    assert f"(digest {digest}) failed verification: keyless builder (release-policy.yaml keyless_builder): " in text
    assert (f"expected a Sigstore bundle among the referrers of this digest, by {SIGNER} (issuer "
            "https://token.actions.githubusercontent.com), verified against keys/sigstore-trusted-root.json, whose "
            "SLSA provenance's subject is this digest, found no Sigstore bundle (neither the referrers API nor the "
            "sha256-<hex> tag lists one)") in text  # fmt: skip
    assert "Fix: do not use this image: nothing shows that the release workflow built it" in text
    promoted = checkout.release("promote", f"{checkout.repository}@{digest}", "--tag", "v9.10")
    assert promoted.returncode == 1, promoted.stderr
    assert "keyless builder (release-policy.yaml keyless_builder)" in folded(promoted.stderr)
    assert requests.get(f"http://{registry.REGISTRY_HOST}/v2/{checkout.path}/manifests/v9.10",
                        timeout=30).status_code == 404  # fmt: skip
    # the fault this step catches: without it, the same image verifies, and verify says the builder is unproven
    passed = checkout.release("verify", f"{checkout.repository}:v9.9", "--policy", str(unproven_policy(checkout)))
    assert passed.returncode == 0, passed.stderr
    assert "built by https://github.com/pytorch-cuda/pytorch-cuda/.github/workflows/release.yml from " in passed.stdout
    assert "  builder unproven: the policy names no keyless_builder" in passed.stdout


def test_a_foreign_bundle_attached_as_the_digest_s_referrer_is_refused(laptop: tuple[Checkout, str]) -> None:
    checkout, digest = laptop
    attached = attach_bundle(checkout, digest, BUNDLE)
    listed = registry.manifest(checkout.path, digest.replace(":", "-")).body["manifests"]
    assert [m.get("artifactType") for m in listed] == [
        "application/vnd.dev.cosign.artifact.sig.v1+json",
        "application/vnd.dsse.envelope.v1+json",
        BUNDLE_TYPE,
    ]
    failed = checkout.release("verify", f"{checkout.repository}:v9.9")
    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    text = folded(failed.stderr)
    assert (f"found 1 bundle(s), none verifies: {attached[:19]}…: keyless certificate source repository (OID "
            "1.3.6.1.4.1.57264.1.12): expected https://github.com/pytorch-cuda/pytorch-cuda, found "
            "https://github.com/malancas/attest-demo (not the release build)") in text  # fmt: skip
    unproven = checkout.release("verify", f"{checkout.repository}:v9.9", "--policy", str(unproven_policy(checkout)))
    assert unproven.returncode == 0, unproven.stderr  # the listing the bundle joined still serves .sig and .att


def test_a_bundle_of_the_policy_s_own_builder_for_another_artifact_is_refused(tmp_path: Path) -> None:
    """The policy names the fixture's builder, and the release key's provenance names its repository, workflow,
    ref and commit: the keyless identity then holds, and the bundle's subject (a wheel) is not this image."""
    registry.require_registry()
    checkout = make_checkout(tmp_path / "checkout", unique_repository(), keyless=True)
    policy = checkout.folder / "release-policy.yaml"
    text = policy.read_text()
    for old, new in (
        ("source_repository: https://github.com/pytorch-cuda/pytorch-cuda", "source_repository: https://github.com/malancas/attest-demo"),
        ("\nworkflow: .github/workflows/release.yml", "\nworkflow: .github/workflows/shared.yml"),
        ("ref_pattern: refs/tags/v*", "ref_pattern: refs/heads/main"),
        ("signer_workflow: pytorch-cuda/pytorch-cuda/.github/workflows/release.yml",
         "signer_workflow: bdehamer/workflows/.github/workflows/attest.yml"),
    ):  # fmt: skip
        assert old in text
        text = text.replace(old, new)
    policy.write_text(text)
    digest = checkout.candidate("candidate", "8304c42402aa3a569882687e0642c359e5a74ac2")
    skopeo_copy(f"{checkout.repository}@{digest}", f"{checkout.repository}:v1")
    signed = checkout.release(
        "sign", f"{checkout.repository}@{digest}", "--key", str(checkout.folder / "keys" / "release.key"),
        "--sbom", str(checkout.folder / "sbom.cdx.json"), "--variant", "cu128-runtime",
        "--source-ref", "refs/heads/main", "--source-repository", "https://github.com/malancas/attest-demo",
        "--workflow", ".github/workflows/shared.yml", "--require-pinned-base", "--tag", "v1",
        "--builder-id", "https://github.com/pytorch-cuda/pytorch-cuda/.github/workflows/release.yml",
    )  # fmt: skip
    assert signed.returncode == 0, signed.stderr
    attached = attach_bundle(checkout, digest, BUNDLE)
    failed = checkout.release("verify", f"{checkout.repository}:v1")
    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    assert (f"found 1 bundle(s), none verifies: {attached[:19]}…: keyless provenance subject[].digest.sha256: "
            f"expected {digest.removeprefix('sha256:')}, found {FOREIGN_SUBJECT} (not the release build)"
            ) in folded(failed.stderr)  # fmt: skip


def test_a_thousand_junk_referrers_before_the_bundle_are_too_many_candidates(tmp_path: Path) -> None:
    """Issue 51: junk listed before the bundle used to decide which 16 were read. Now every candidate is read, within
    a count and a total of bytes; 1,000 junk entries (listed, never pushed) are refused as too many candidates, none
    read and none chosen, exit 1, in well under verify's 3 s."""
    registry.require_registry()
    checkout = make_checkout(tmp_path / "checkout", unique_repository(), keyless=True)
    digest = checkout.candidate("candidate", "a" * 40)
    skopeo_copy(f"{checkout.repository}@{digest}", f"{checkout.repository}:v9.9")
    checkout.sign(f"{checkout.repository}@{digest}", "release", "v9.9")
    attach_bundle(checkout, digest, BUNDLE)
    tag = digest.replace(":", "-")
    index = registry.manifest(checkout.path, tag).body
    junk = []
    empty = {"mediaType": "application/vnd.oci.empty.v1+json", "size": 2,
             "digest": "sha256:" + hashlib.sha256(b"{}").hexdigest()}  # fmt: skip
    with requests.Session() as session:  # the registry holds every manifest an index lists: push 1,000 junk ones
        for n in range(1000):
            raw = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": BUNDLE_TYPE,
                              "config": empty, "layers": [], "annotations": {"junk": str(n)}}).encode()  # fmt: skip
            junk_digest = "sha256:" + hashlib.sha256(raw).hexdigest()
            url = f"http://{registry.REGISTRY_HOST}/v2/{checkout.path}/manifests/{junk_digest}"
            assert session.put(url, data=raw, headers={"Content-Type": OCI_MANIFEST}, timeout=30).status_code == 201
            junk.append({"mediaType": OCI_MANIFEST, "artifactType": BUNDLE_TYPE, "size": len(raw),
                         "digest": junk_digest})  # fmt: skip
    index["manifests"] = junk + index["manifests"]
    index_url = f"http://{registry.REGISTRY_HOST}/v2/{checkout.path}/manifests/{tag}"
    put_manifest(index_url, json.dumps(index).encode(), OCI_INDEX)
    failed = measured_verify(checkout, f"{checkout.repository}:v9.9", tmp_path)
    assert failed.status == 1, (failed.stdout, failed.stderr)
    assert failed.peak_rss < 1 << 30, failed  # the Done-when's memory bound, measured (wait4)
    print(f"verify, 1,001 referrers: exit 1, peak RSS {failed.peak_rss / 2**20:.0f} MiB, {failed.seconds:.2f} s")
    text = folded(failed.stderr)
    assert f"(digest {digest}) failed verification: keyless builder referrers (release-policy.yaml " in text
    assert ("found 1001 Sigstore bundle referrers listed, more than the 64 examined: none read (too many "
            "candidates: a listing padded with junk, so none is chosen by its place in it)") in text  # fmt: skip
