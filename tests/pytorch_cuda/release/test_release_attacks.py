"""Release attacks against `build.py release verify`, each on the loopback registry (127.0.0.1:5000) with small real
images, real ECDSA keys and the committed policy's shape: an untouched release verifies with the documented
command and no flag; each attack fails with exit 1 naming the field, the expected value and the value found."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import local_registry as registry
from tests.support.release_checkout import (
    Checkout,
    folded,
    make_checkout,
    pushed_candidates,
    put_with_subject,
    skopeo_copy,
)
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Release:
    checkout: Checkout
    tested: str  # released as v9.9 and v9.7 (after `old`)
    old: str  # released as v9.7 first, superseded
    unsigned: str  # in the repository, never signed

    @property
    def repository(self) -> str:
        return self.checkout.repository


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    checkout, (old, tested, unsigned) = pushed_candidates(tmp_path_factory, "old", "tested", "unsigned")
    repository = checkout.repository
    for digest, tags in ((old, ("v9.7",)), (tested, ("v9.9", "v9.7"))):
        for tag in tags:
            skopeo_copy(f"{repository}@{digest}", f"{repository}:{tag}")
        checkout.sign(f"{repository}@{digest}", "release", *tags)
    return Release(checkout, tested, old, unsigned)


def refused(release: Release, image: str) -> str:
    failed = release.checkout.release("verify", image)
    assert failed.returncode == 1, (failed.returncode, failed.stdout, failed.stderr)
    assert "do not use this image" in folded(failed.stderr)
    return folded(failed.stderr)


def test_an_untouched_release_verifies_with_the_documented_command_and_no_flag(release: Release) -> None:
    verified = release.checkout.release("verify", f"{release.repository}:v9.9")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith(f"verified {release.repository}:v9.9 ({release.tested}) against release-policy")
    found = json.loads(release.checkout.release("verify", f"{release.repository}@{release.tested}", "--json").stdout)
    assert (found["digest"], found["tags"], found["commit"]) == (release.tested, ["v9.7", "v9.9"], "b" * 40)
    assert (found["source_ref"], found["sbom_components"]) == ("refs/tags/v9.9.0", 1)


def test_rollback_to_an_older_signed_digest_fails(release: Release) -> None:
    """v9.7 was `old`, then re-released as `tested`; whoever can move the tag points it back at `old`."""
    skopeo_copy(f"{release.repository}@{release.old}", f"{release.repository}:v9.7")
    text = refused(release, f"{release.repository}:v9.7")
    assert f'release-index targets["v9.7"]: expected {release.tested}, found {release.old}' in text
    assert "the tag was moved to another image" in text
    skopeo_copy(f"{release.repository}@{release.tested}", f"{release.repository}:v9.7")
    text = refused(release, f"{release.repository}@{release.old}")  # by digest: no tag is bound to it any more
    assert "release-index targets: expected a tag bound to this digest, found none" in text


def test_a_signature_made_for_another_repository_fails(release: Release) -> None:
    """An image signed by the release key in a scratch repository (a key that signs every build), copied with its
    signature and attestations into the release repository."""
    scratch = unique_repository()
    dev = release.checkout.candidate("dev", "d" * 40, scratch)
    release.checkout.sign(f"{scratch}@{dev}", "release")
    for tag in ("dev", dev.replace(":", "-") + ".sig", dev.replace(":", "-") + ".att"):
        skopeo_copy(f"{scratch}:{tag}", f"{release.repository}:{tag}")
    text = refused(release, f"{release.repository}@{dev}")
    assert f"critical.identity.docker-reference: expected {release.repository}, found {scratch}" in text


def test_an_attestation_for_another_digest_fails(release: Release) -> None:
    """`unsigned` gets a real signature, then the tested image's .att under a rewritten subject."""
    release.checkout.sign(f"{release.repository}@{release.unsigned}", "release")
    put_with_subject(
        release.checkout.path, release.tested.replace(":", "-") + ".att",
        release.unsigned.replace(":", "-") + ".att", release.unsigned,
    )  # fmt: skip
    text = refused(release, f"{release.repository}@{release.unsigned}")
    expected, found = release.unsigned.partition(":")[2], release.tested.partition(":")[2]
    assert f"https://cyclonedx.org/bom subject[0].digest.sha256: expected {expected}, found {found}" in text


def test_a_signed_payload_naming_another_digest_under_a_rewritten_subject_fails(release: Release) -> None:
    victim = release.checkout.candidate("candidate-victim", "e" * 40)
    put_with_subject(
        release.checkout.path, release.tested.replace(":", "-") + ".sig", victim.replace(":", "-") + ".sig", victim
    )
    text = refused(release, f"{release.repository}@{victim}")
    assert f"critical.image.docker-manifest-digest: expected {victim}, found {release.tested}" in text


def test_a_signature_by_a_key_not_in_the_policy_fails(release: Release) -> None:
    forged = release.checkout.candidate("candidate-forged", "f" * 40)
    release.checkout.sign(f"{release.repository}@{forged}", "intruder")
    text = refused(release, f"{release.repository}@{forged}")
    assert "dev.cosignproject.cosign/signature (.sig, 1 signature(s)): expected a signature by a key of " in text
    assert "found no signature that those keys verify" in text
    # nor can the intruder bind a tag: the index is signed by the release key (bad input, exit 2)
    bound = release.checkout.release(
        "sign", f"{release.repository}@{forged}", "--key", str(release.checkout.folder / "keys/intruder.key"),
        "--public-key", str(release.checkout.folder / "keys/intruder.pub"),
        "--sbom", str(release.checkout.folder / "sbom.cdx.json"), "--variant", "cu128-runtime",
        "--source-ref", "refs/tags/v1", "--tag", "v9.9",
    )  # fmt: skip
    assert bound.returncode == 2
    text = folded(bound.stderr)
    assert "(--key) is not a targets key of release-root.json (root v1), so the release index is not signed" in text


def test_an_expired_index_fails_and_an_older_index_put_back_fails(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "checkout", unique_repository())
    image = checkout.candidate("v1", "a" * 40)
    signed_at = time.monotonic()
    checkout.sign(f"{checkout.repository}@{image}", "release", "v1", lifetime=12)
    fresh = checkout.release("verify", f"{checkout.repository}:v1")
    assert fresh.returncode == 0, fresh.stderr
    first = registry.manifest(checkout.path, "release-index").digest
    # past the expiry (whole seconds), on the real clock: the one expiry that is waited for (the other tests move
    # build.py's clock ahead, Checkout.later)
    time.sleep(max(0.0, signed_at + 14 - time.monotonic()))
    text = folded(checkout.release("verify", f"{checkout.repository}:v1").stderr)
    assert "failed verification: release-index timestamp.expires: expected a date after now" in text
    refreshed = checkout.release("refresh-index", "--key", str(checkout.folder / "keys" / "release.key"))
    assert refreshed.returncode == 1, refreshed.stderr  # an expired index is never re-signed
    text = folded(refreshed.stderr)
    assert f"refresh-index refused the release index {checkout.repository}:release-index ({first}): " in text
    assert "release-index timestamp.expires: expected a date after now" in text
    assert "Re-signing it would make an old, expired or foreign index look fresh" in text
    image2 = checkout.candidate("v2", "b" * 40)
    checkout.sign(f"{checkout.repository}@{image2}", "release", "v1", lifetime=3600, expect_status=1)
    assert registry.manifest(checkout.path, "release-index").digest == first  # nothing built on the expired index
