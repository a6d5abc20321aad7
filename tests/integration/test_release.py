"""A release you can verify, on the loopback registry (127.0.0.1:5000) with small images built here:
the tested digest is promoted to the release tags byte for byte, signed and attested (signature, CycloneDX
SBOM, SLSA provenance in DSSE envelopes), and `build.py release verify` passes on it and fails, with a clear
message, on a tag moved to another image, on attestations signed by another key, and on attestations replayed
from another image."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest

from pytorch_cuda.release.promote import PromotionMismatchError, promote
from pytorch_cuda.release.statements import SIGNATURE, attachment_tag
from tests.integration import local_registry as registry
from tests.integration.conftest import ROOT
from tests.integration.tiny_images import build_and_push, unique_repository

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Release:
    repository: str  # 127.0.0.1:5000/ci/release-test-xxxx
    tested: str  # the digest "conformance tested" (the candidate push's)
    other: str  # another image's digest in the same repository, never signed
    keys: Path
    sbom: Path

    @property
    def path(self) -> str:  # the repository without the registry host
        return self.repository.removeprefix(f"{registry.REGISTRY_HOST}/")


def release_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "release", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def release(client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory) -> Release:
    why = registry.answers()
    if why is not None:
        pytest.fail(
            f"no registry answers on http://{registry.REGISTRY_HOST}/v2/ ({why}): run scripts/setup-registry.sh"
        )
    repository = unique_repository()
    tested = build_and_push(client, repository, "candidate-tested", "a" * 40)
    other = build_and_push(client, repository, "candidate-other", "b" * 40)
    keys = tmp_path_factory.mktemp("keys")
    for name in ("release", "intruder"):
        made = release_cli("keygen", "--key", str(keys / f"{name}.key"), "--public-key", str(keys / f"{name}.pub"))
        assert made.returncode == 0, made.stderr
    sbom = keys / "sbom.cdx.json"
    sbom.write_text(json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{"name": "hello"}]}))
    promoted = release_cli("promote", f"{repository}@{tested}", "--tag", "v9.9", "--tag", "v9.9-runtime", "--json")
    assert promoted.returncode == 0, promoted.stderr
    signed = release_cli(
        "sign", f"{repository}@{tested}", "--key", str(keys / "release.key"), "--public-key",
        str(keys / "release.pub"), "--sbom", str(sbom), "--builder-id", "https://example.test/builder",
    )  # fmt: skip
    assert signed.returncode == 0, signed.stderr
    return Release(repository, tested, other, keys, sbom)


def test_the_release_tags_serve_the_tested_manifest_byte_for_byte(release: Release) -> None:
    tested = registry.manifest(release.path, release.tested)
    for tag in ("v9.9", "v9.9-runtime"):
        served = registry.manifest(release.path, tag)
        assert (served.digest, served.served_digest) == (release.tested, release.tested)
        assert served.body == tested.body


def test_promotion_fails_when_a_tag_serves_other_bytes(release: Release) -> None:
    """A copy that re-encodes the manifest (skopeo --format oci, as a converting proxy would) is caught."""

    def converting_copy(argv: list[str]) -> subprocess.CompletedProcess[str]:
        converted = [arg for arg in argv if arg != "--preserve-digests"]
        return subprocess.run([*converted[:2], "--format", "oci", *converted[2:]], capture_output=True, text=True)

    with pytest.raises(PromotionMismatchError) as caught:
        promote(f"{release.repository}@{release.tested}", ["v9.9-converted"], run=converting_copy)
    served = registry.manifest(release.path, "v9.9-converted").digest
    assert served != release.tested
    assert f"serves {served}, not the tested manifest {release.tested}" in caught.value.cause
    assert caught.value.exit_status == 1


def test_promotion_refuses_a_tag_as_the_tested_image(release: Release) -> None:
    refused = release_cli("promote", f"{release.repository}:candidate-tested", "--tag", "v9.9")
    assert refused.returncode == 2
    assert "is not pinned by digest" in refused.stderr


def test_verify_passes_on_the_promoted_tag(release: Release) -> None:
    verified = release_cli(
        "verify", f"{release.repository}:v9.9", "--public-key", str(release.keys / "release.pub"),
        "--builder-id", "https://example.test/builder", "--json",
    )  # fmt: skip
    assert verified.returncode == 0, verified.stderr
    found = json.loads(verified.stdout)
    assert found["digest"] == release.tested
    assert (found["sbom_components"], found["revision"]) == (1, "a" * 40)


def test_verify_fails_on_a_tag_moved_to_another_image(release: Release) -> None:
    moved = release_cli("promote", f"{release.repository}@{release.other}", "--tag", "v9.9-moved")
    assert moved.returncode == 0, moved.stderr
    failed = release_cli(
        "verify", f"{release.repository}:v9.9-moved", "--public-key", str(release.keys / "release.pub")
    )
    assert failed.returncode == 1
    assert f"(digest {release.other}) failed verification: it has no sig" in " ".join(failed.stderr.split())
    assert "do not use this image" in failed.stderr


def test_verify_fails_with_another_key(release: Release) -> None:
    failed = release_cli("verify", f"{release.repository}:v9.9", "--public-key", str(release.keys / "intruder.pub"))
    assert failed.returncode == 1
    assert "signature does not verify with the release key" in " ".join(failed.stderr.split())


def test_verify_fails_on_attestations_replayed_from_another_image(release: Release) -> None:
    """The tested image's signature copied to the other image's signature tag: its subject is not that image."""
    source = f"{release.repository}:{attachment_tag(release.tested, SIGNATURE)}"
    replayed = f"{release.repository}:{attachment_tag(release.other, SIGNATURE)}"
    copied = subprocess.run(
        ["skopeo", "copy", "--preserve-digests", "--src-tls-verify=false", "--dest-tls-verify=false",
         f"docker://{source}", f"docker://{replayed}"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert copied.returncode == 0, copied.stderr
    failed = release_cli(
        "verify", f"{release.repository}@{release.other}", "--public-key", str(release.keys / "release.pub")
    )
    assert failed.returncode == 1
    assert f"is not a DSSE attachment of this digest (its subject is {release.tested})" in " ".join(
        failed.stderr.split()
    )
