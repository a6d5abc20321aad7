"""The release pieces that need no registry: skopeo's command, statements, DSSE round trips with real keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError

from pytorch_cuda.cli import main as cli_main
from pytorch_cuda.release import keys
from pytorch_cuda.release.attestations import envelope
from pytorch_cuda.release.promote import skopeo_copy_argv
from pytorch_cuda.release.registry_client import RegistryAccessError, is_loopback, reference
from pytorch_cuda.release.statements import PROVENANCE, SBOM, SIGNATURE, BuildRun, attachment_tag, provenance, statement

DIGEST = "sha256:" + "ab" * 32


def test_skopeo_copies_every_platform_and_keeps_the_digest_plain_http_only_on_loopback() -> None:
    loopback = skopeo_copy_argv(f"127.0.0.1:5000/ci/x@{DIGEST}", "127.0.0.1:5000/ci/x:v2.9")
    assert loopback[:4] == ["skopeo", "copy", "--all", "--preserve-digests"]
    assert {"--src-tls-verify=false", "--dest-tls-verify=false"} <= set(loopback)
    assert loopback[-2:] == [f"docker://127.0.0.1:5000/ci/x@{DIGEST}", "docker://127.0.0.1:5000/ci/x:v2.9"]
    remote = skopeo_copy_argv(f"ghcr.io/o/x@{DIGEST}", "ghcr.io/o/x:v2.9")
    assert not any("tls-verify" in arg for arg in remote)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1:5000", True), ("localhost:5000", True), ("[::1]:5000", True), ("ghcr.io", False), ("10.0.0.1", False)],
)
def test_only_loopback_registries_speak_plain_http(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_reference_without_a_registry_host_is_refused() -> None:
    with pytest.raises(RegistryAccessError, match="names no registry host"):
        reference("pytorch-cuda:v2.9")


def test_attachments_are_found_from_the_digest() -> None:
    assert attachment_tag(DIGEST, SIGNATURE) == "sha256-" + "ab" * 32 + ".sig"
    assert attachment_tag(DIGEST, PROVENANCE).endswith(".provenance")


def test_provenance_records_the_source_revision_labels_and_inputs() -> None:
    labels = {
        "org.opencontainers.image.source": "https://github.com/o/r",
        "org.opencontainers.image.revision": "c" * 40,
        "dev.pytorch-cuda.torch": "2.9.1",
        "unrelated": "x",
    }
    base = "docker.io/library/debian@" + DIGEST
    predicate = provenance(labels, BuildRun("https://builder", "run-1"), {base: DIGEST})
    dependencies = predicate["buildDefinition"]["resolvedDependencies"]
    assert dependencies[0] == {"uri": "git+https://github.com/o/r", "digest": {"gitCommit": "c" * 40}}
    assert dependencies[1] == {"uri": base, "digest": {"sha256": "ab" * 32}}
    assert "unrelated" not in predicate["buildDefinition"]["externalParameters"]["labels"]
    assert predicate["runDetails"]["builder"]["id"] == "https://builder"


def test_an_envelope_verifies_with_its_key_and_not_with_another_or_altered(tmp_path: Path) -> None:
    keys.generate(tmp_path / "a.key", tmp_path / "a.pub")
    keys.generate(tmp_path / "b.key", tmp_path / "b.pub")
    assert (tmp_path / "a.key").stat().st_mode & 0o777 == 0o600
    signer = keys.signer(tmp_path / "a.key", tmp_path / "a.pub")
    payload = statement("r", DIGEST, str(SBOM.predicate_type), {"bomFormat": "CycloneDX"})
    signed = envelope(SBOM, payload, signer)
    assert json.loads(signed)["payloadType"] == "application/vnd.in-toto+json"
    Envelope.from_dict(json.loads(signed)).verify([keys.public_key(tmp_path / "a.pub")], 1)
    with pytest.raises(VerificationError):
        Envelope.from_dict(json.loads(signed)).verify([keys.public_key(tmp_path / "b.pub")], 1)
    altered = Envelope.from_dict(json.loads(signed))
    altered.payload = altered.payload.replace(b"ab", b"cd")
    with pytest.raises(VerificationError):
        altered.verify([keys.public_key(tmp_path / "a.pub")], 1)


def main(argv: list[str]) -> int:
    return cli_main(["release", *argv])


def test_keygen_refuses_to_overwrite_and_a_wrong_pair_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keygen", "--key", str(tmp_path / "a.key"), "--public-key", str(tmp_path / "a.pub")]) == 0
    assert main(["keygen", "--key", str(tmp_path / "a.key"), "--public-key", str(tmp_path / "c.pub")]) == 2
    assert "exists already" in " ".join(capsys.readouterr().err.split())  # wrapped where the path ends
    keys.generate(tmp_path / "b.key", tmp_path / "b.pub")
    with pytest.raises(keys.KeyFileError, match="does not match public key"):
        keys.signer(tmp_path / "a.key", tmp_path / "b.pub")


def test_verify_without_a_readable_public_key_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", f"127.0.0.1:5000/ci/x@{DIGEST}", "--public-key", str(tmp_path / "none.pub")]) == 2
    assert "cannot read the public key" in capsys.readouterr().err
