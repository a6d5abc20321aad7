"""The release pieces that need no registry: skopeo's command, the keys, the policy, the Statements built by
in-toto-attestation, the TUF index, and verify reading the committed policy by default."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tuf.api.metadata import Metadata, Targets, Timestamp

from pytorch_cuda.cli import main as cli_main
from pytorch_cuda.release import keys, release_index
from pytorch_cuda.release.commands import check_pinned_base
from pytorch_cuda.release.index_client import REPOSITORY_FIELD, IndexFailureError, verified_index
from pytorch_cuda.release.promote import skopeo_copy_argv
from pytorch_cuda.release.release_policy import PolicyError, load_policy
from pytorch_cuda.release.statements import BuildRun, Source, provenance, statement
from pytorch_cuda.release.trusted_root import TrustedRootError, load_root, make_root

ROOT = Path(__file__).resolve().parents[3]
DIGEST = "sha256:" + "ab" * 32


def test_skopeo_copies_every_platform_and_keeps_the_digest_plain_http_only_on_loopback() -> None:
    loopback = skopeo_copy_argv(f"127.0.0.1:5000/ci/x@{DIGEST}", "127.0.0.1:5000/ci/x:v2.9")
    assert loopback[:4] == ["skopeo", "copy", "--all", "--preserve-digests"]
    assert {"--src-tls-verify=false", "--dest-tls-verify=false"} <= set(loopback)
    assert loopback[-2:] == [f"docker://127.0.0.1:5000/ci/x@{DIGEST}", "docker://127.0.0.1:5000/ci/x:v2.9"]
    remote = skopeo_copy_argv(f"ghcr.io/o/x@{DIGEST}", "ghcr.io/o/x:v2.9")
    assert not any("tls-verify" in arg for arg in remote)


def run() -> BuildRun:
    source = Source("https://github.com/o/r", "refs/tags/v2.9.1", "c" * 40)
    return BuildRun(
        "https://github.com/o/r/.github/workflows/release.yml", "https://github.com/o/r/actions/runs/1/attempts/1",
        source, "cu128-runtime", ".github/workflows/release.yml",
        finished_on=datetime(2026, 12, 5, 12, 0, tzinfo=UTC), materials={"docker.io/library/debian": DIGEST},
    )  # fmt: skip


def test_provenance_records_the_variant_the_source_ref_the_commit_and_the_workflow() -> None:
    predicate = provenance(run())
    definition = predicate["buildDefinition"]
    assert definition["externalParameters"] == {
        "workflow": {"repository": "https://github.com/o/r", "ref": "refs/tags/v2.9.1",
                     "path": ".github/workflows/release.yml"},
        "variant": "cu128-runtime",
    }  # fmt: skip
    assert definition["resolvedDependencies"] == [
        {"uri": "git+https://github.com/o/r@refs/tags/v2.9.1", "digest": {"gitCommit": "c" * 40}},
        {"uri": "docker.io/library/debian", "digest": {"sha256": "ab" * 32}},
    ]
    assert predicate["runDetails"]["builder"]["id"] == "https://github.com/o/r/.github/workflows/release.yml"
    assert predicate["runDetails"]["metadata"]["finishedOn"] == "2026-12-05T12:00:00Z"


def test_a_statement_keeps_the_sbom_s_integers_and_names_its_subject() -> None:
    document = statement("ghcr.io/o/r", DIGEST, "https://cyclonedx.org/bom", {"bomFormat": "CycloneDX", "version": 1})
    assert document["_type"] == "https://in-toto.io/Statement/v1"
    assert document["subject"] == [{"name": "ghcr.io/o/r", "digest": {"sha256": "ab" * 32}}]
    assert document["predicate"]["version"] == 1
    assert isinstance(document["predicate"]["version"], int)  # not protobuf's 1.0
    with pytest.raises(ValueError, match="Predicate type required"):  # in-toto-attestation's validation
        statement("ghcr.io/o/r", DIGEST, "", {})


def test_keys_are_encrypted_ecdsa_p256_and_need_their_passphrase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(keys.PASSPHRASE_VARIABLE, raising=False)
    with pytest.raises(keys.KeyFileError, match="RELEASE_KEY_PASSPHRASE is empty"):
        keys.generate(tmp_path / "a.key", tmp_path / "a.pub")
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, "right")
    key = keys.generate(tmp_path / "a.key", tmp_path / "a.pub")
    assert (key.keytype, key.scheme) == ("ecdsa", "ecdsa-sha2-nistp256")
    assert b"ENCRYPTED PRIVATE KEY" in (tmp_path / "a.key").read_bytes()
    assert (tmp_path / "a.key").stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, "wrong")
    with pytest.raises(keys.KeyFileError, match="cannot load the private key"):
        keys.signer(str(tmp_path / "a.key"), tmp_path / "a.pub")
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, "right")
    keys.generate(tmp_path / "b.key", tmp_path / "b.pub")
    with pytest.raises(keys.KeyFileError, match="does not match public key"):
        keys.signer(str(tmp_path / "a.key"), tmp_path / "b.pub")
    with pytest.raises(keys.KeyFileError, match="cannot open the signer awskms:"):
        keys.signer("awskms:arn:aws:kms:nowhere:0:key/none", tmp_path / "a.pub")


def test_the_committed_policy_names_the_committed_ecdsa_key() -> None:
    loaded = load_policy(ROOT / "release-policy.yaml")
    assert loaded.policy.repository == "ghcr.io/pytorch-cuda/pytorch-cuda"
    assert loaded.policy.ref_allowed("refs/tags/v2.9.1")
    assert not loaded.policy.ref_allowed("refs/heads/main")
    assert [(k.keytype, k.scheme) for k in loaded.keys] == [("ecdsa", "ecdsa-sha2-nistp256")]


def test_a_policy_key_given_twice_is_refused(tmp_path: Path) -> None:
    """Before: PyYAML kept the last `repository:`, so a second one appended to the policy replaced the first."""
    text = (ROOT / "release-policy.yaml").read_text() + "repository: ghcr.io/someone-else/pytorch-cuda\n"
    (tmp_path / "release-policy.yaml").write_text(text)
    with pytest.raises(PolicyError, match="key 'repository' is given twice in one mapping"):
        load_policy(tmp_path / "release-policy.yaml")


def test_a_policy_without_a_key_is_refused_naming_it(tmp_path: Path) -> None:
    text = (ROOT / "release-policy.yaml").read_text().replace("builder_id:", "builder:")
    (tmp_path / "release-policy.yaml").write_text(text)
    with pytest.raises(PolicyError, match="at key 'builder_id'"):
        load_policy(tmp_path / "release-policy.yaml")


def test_the_index_binds_tags_bumps_versions_names_its_repository_and_refuses_another_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, "p")
    for name in ("a", "b", "root"):
        keys.generate(tmp_path / f"{name}.key", tmp_path / f"{name}.pub")
    signer = keys.signer(str(tmp_path / "a.key"), tmp_path / "a.pub")
    now = datetime.now(UTC).replace(microsecond=0)
    root_signer = keys.signer(str(tmp_path / "root.key"), tmp_path / "root.pub")
    (tmp_path / "root.json").write_bytes(make_root(root_signer, signer.public_key, signer.public_key, now))
    root = load_root(tmp_path / "root.json")
    repo = "127.0.0.1:5000/ci/x"
    both = release_index.IndexSigners(signer, signer)
    first = release_index.updated(None, root, both, [release_index.Binding("v2.9", DIGEST, 10)], repository=repo,
                                  now=now, lifetime=timedelta(days=1))  # fmt: skip
    current = verified_index(first, root, repo, tmp_path / "cache")
    second = release_index.updated(current, root, both, [release_index.Binding("v2.9.1", DIGEST, 10)],
                                   repository=repo, now=now)  # fmt: skip
    targets = Metadata[Targets].from_bytes(second["targets.json"]).signed
    assert (targets.version, sorted(targets.targets)) == (2, ["v2.9", "v2.9.1"])
    assert targets.targets["v2.9"].hashes == {"sha256": "ab" * 32}
    assert targets.unrecognized_fields == {REPOSITORY_FIELD: repo}
    stamp = Metadata[Timestamp].from_bytes(second["timestamp.json"]).signed
    assert stamp.expires == now + release_index.TIMESTAMP_LIFETIME == now + timedelta(days=2)
    assert second["root.json"] == root.raw  # the committed root, never a new one
    verified = verified_index(second, root, repo, tmp_path / "cache")
    refreshed = release_index.updated(verified, root, release_index.IndexSigners(signer), [], repository=repo, now=now)
    assert refreshed["targets.json"] == second["targets.json"]  # a refresh re-signs the timestamp alone
    intruder = keys.signer(str(tmp_path / "b.key"), tmp_path / "b.pub")
    with pytest.raises(release_index.IndexSigningError, match=r"\(--timestamp-key\) is not a timestamp key of root"):
        release_index.updated(verified, root, release_index.IndexSigners(intruder), [], repository=repo, now=now)
    with pytest.raises(IndexFailureError) as caught:
        verified_index(second, root, "127.0.0.1:5000/ci/other", tmp_path / "other-cache")
    assert caught.value.reason.why == "an index signed for another repository, copied here"


def test_a_root_not_signed_by_its_own_root_key_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, "p")
    for name in ("a", "root"):
        keys.generate(tmp_path / f"{name}.key", tmp_path / f"{name}.pub")
    online = keys.signer(str(tmp_path / "a.key"), tmp_path / "a.pub")
    root_signer = keys.signer(str(tmp_path / "root.key"), tmp_path / "root.pub")
    made = json.loads(make_root(root_signer, online.public_key, online.public_key, datetime.now(UTC)))
    made["signed"]["roles"]["targets"]["keyids"] = ["f" * 64]  # edited after signing
    (tmp_path / "root.json").write_text(json.dumps(made))
    with pytest.raises(TrustedRootError, match="is not a TUF root signed by its own root keys"):
        load_root(tmp_path / "root.json")
    with pytest.raises(TrustedRootError, match="is not in this checkout, so no index can be trusted"):
        load_root(tmp_path / "none.json")


def main(argv: list[str]) -> int:
    return cli_main(["release", *argv])


def test_verify_reads_the_committed_policy_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "127.0.0.1:5000/ci/pytorch-cuda:v2.9", "--root", str(ROOT)]) == 1
    text = " ".join(capsys.readouterr().err.split())
    assert "repository: expected ghcr.io/pytorch-cuda/pytorch-cuda, found 127.0.0.1:5000/ci/pytorch-cuda" in text


def test_sign_without_its_key_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, "p")
    (tmp_path / "sbom.json").write_text('{"bomFormat": "CycloneDX"}')
    argv = ["sign", f"127.0.0.1:5000/ci/x@{DIGEST}", "--key", str(tmp_path / "none.key"), "--sbom",
            str(tmp_path / "sbom.json"), "--variant", "cu128-runtime", "--source-ref", "refs/v1",
            "--root", str(ROOT)]  # fmt: skip
    assert main(argv) == 2
    text = " ".join(capsys.readouterr().err.split())
    assert f"cannot load the private key {tmp_path / 'none.key'} (FileNotFoundError" in text


def test_the_release_workflow_s_sign_refuses_a_base_without_a_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--require-pinned-base (release.yml passes it): the committed matrix.yaml's base has no digest: yet."""
    (tmp_path / "sbom.json").write_text('{"bomFormat": "CycloneDX"}')
    argv = ["sign", f"127.0.0.1:5000/ci/x@{DIGEST}", "--key", "awskms:none", "--sbom", str(tmp_path / "sbom.json"),
            "--variant", "cu128-runtime", "--source-ref", "refs/v1", "--root", str(ROOT),
            "--require-pinned-base"]  # fmt: skip
    assert main(argv) == 2
    assert "matrix.yaml's base 'trixie' (pytorch-cuda-base/debian:trixie) carries no digest:" in " ".join(
        capsys.readouterr().err.split()
    )
    pinned = tmp_path / "matrix.yaml"
    pin = "    digest: sha256:" + "1" * 64 + "\n"
    pinned.write_text(
        (ROOT / "matrix.yaml").read_text().replace('    python: "3.13"\n', '    python: "3.13"\n' + pin, 1)
    )
    assert check_pinned_base(pinned) == "sha256:" + "1" * 64
