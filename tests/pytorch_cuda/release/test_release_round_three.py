"""Issue 51's attacks, on the loopback registry with throwaway keys and the documented split key setup (the release
key for targets and snapshot, a timestamp key of its own, as `init-root --timestamp-public-key` writes it): each
refused with a named reason and its exit status."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from securesystemslib.signer import Signer
from tuf.api.metadata import Metadata, MetaFile, Root, Snapshot, Targets, Timestamp

from pytorch_cuda.oci.registry_client import RegistryClient, reference
from pytorch_cuda.release import keys, release_index
from pytorch_cuda.release.trusted_root import load_root
from tests.support import local_registry as registry
from tests.support.release_checkout import (
    PASSPHRASE,
    Checkout,
    folded,
    fresh,
    make_checkout,
    refresh,
    released,
    skopeo_copy,
)
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration


@pytest.fixture
def split(tmp_path: Path) -> Checkout:
    return make_checkout(tmp_path / "checkout", unique_repository(), split=True)


def test_the_documented_split_key_setup_releases_refreshes_and_verifies(split: Checkout, tmp_path: Path) -> None:
    """sign --tag (release key + timestamp key), promote, refresh-index (timestamp key alone), verify."""
    image = released(split, "a" * 40, "v9.9")
    assert refresh(split)[0] == 0
    verified = fresh(split, tmp_path, "user").release("verify", f"{split.repository}:v9.9")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.rstrip().endswith(f"pull {split.repository}@{image}")
    # without the timestamp key, sign --tag is refused before any write, naming the role and the flag
    other = split.candidate("candidate-other", "b" * 40)
    before = registry.manifest(split.path, "release-index").digest
    failed = split.sign(f"{split.repository}@{other}", "release", "v9.10", timestamp_key=None, expect_status=2)
    text = folded(failed.stderr)
    assert "(--timestamp-key) is not a timestamp key of release-root.json (root v1)" in text
    assert registry.manifest(split.path, "release-index").digest == before
    # and promote moves no tag the index does not bind to the tested digest (signed and attested, never bound)
    split.sign(f"{split.repository}@{other}", "release")
    unbound = split.release("promote", f"{split.repository}@{other}", "--tag", "v9.9")
    assert unbound.returncode == 1
    assert f"the release index binds v9.9 to {image}, not to the tested {other}, so no tag was moved" in folded(
        unbound.stderr
    )
    assert registry.manifest(split.path, "v9.9").digest == image
    # the timestamp key alone binds nothing: refresh re-signs the timestamp, targets keep their bytes
    targets_before = Metadata.from_bytes(_index_file(split, "targets.json")).signed.version
    assert refresh(split)[0] == 0
    assert Metadata.from_bytes(_index_file(split, "targets.json")).signed.version == targets_before


def _client(checkout: Checkout) -> RegistryClient:
    return RegistryClient.for_ref(reference(f"{checkout.repository}:x"))


def _index_file(checkout: Checkout, name: str) -> bytes:
    return release_index.fetch(_client(checkout), checkout.repository, "release-index").files[name]


def test_the_daily_refresh_does_not_launder_a_rollback(split: Checkout, tmp_path: Path) -> None:
    """Issue 51, 1: put back the old index, move v9.9 to the old image, run the refresh. Refused on the refresher
    that wrote the newer index (its cache), on a fresh CI runner and a fresh verifier (the committed floor)."""
    old = released(split, "a" * 40, "v9.9")
    old_index = registry.manifest(split.path, "release-index").digest
    released(split, "b" * 40, "v9.9")
    floor = split.release("record-floor")
    assert floor.returncode == 0, floor.stderr
    assert "targets v2, snapshot v2; commit it" in floor.stdout
    skopeo_copy(f"{split.repository}@{old_index}", f"{split.repository}:release-index")
    skopeo_copy(f"{split.repository}@{old}", f"{split.repository}:v9.9")
    status, text = refresh(split)  # the machine that wrote v2
    assert status == 1, text
    assert "refresh-index refused the release index" in text
    assert "release-index version: expected no role older than this machine verified before" in text
    status, text = refresh(fresh(split, tmp_path, "runner"))  # a fresh CI runner: the committed floor
    assert status == 1, text
    assert "release-index targets.version: expected at least 2 (release-index-floor.json, committed), found 1" in text
    assert "Re-signing it would make an old, expired or foreign index look fresh" in text
    assert registry.manifest(split.path, "release-index").digest == old_index  # nothing re-signed
    verified = fresh(split, tmp_path, "user").release("verify", f"{split.repository}:v9.9")
    assert verified.returncode == 1
    assert "release-index targets.version: expected at least 2" in folded(verified.stderr)
    # the floor is never lowered from an older index
    lowered = fresh(split, tmp_path, "lower").release("record-floor")
    assert lowered.returncode == 1, lowered.stderr


def _rotate(checkout: Checkout, *extra: str) -> None:
    keys_dir = checkout.folder / "keys"
    rotated = checkout.release("rotate-root", "--root-key", str(keys_dir / "root.key"),
                               "--root-public-key", str(keys_dir / "root.pub"), *extra)  # fmt: skip
    assert rotated.returncode == 0, rotated.stderr


def _high_versions(files: dict[str, bytes], revoked: Signer, stamp: Signer) -> dict[str, bytes]:
    targets = Metadata[Targets].from_bytes(files["targets.json"])
    snapshot = Metadata[Snapshot].from_bytes(files["snapshot.json"])
    timestamp = Metadata[Timestamp].from_bytes(files["timestamp.json"])
    targets.signed.version = snapshot.signed.version = timestamp.signed.version = 100
    snapshot.signed.meta["targets.json"] = MetaFile(100)
    timestamp.signed.snapshot_meta = MetaFile(100)
    for metadata, signer in ((targets, revoked), (snapshot, revoked), (timestamp, stamp)):
        metadata.sign(signer)
    return {
        "targets.json": targets.to_bytes(),
        "snapshot.json": snapshot.to_bytes(),
        "timestamp.json": timestamp.to_bytes(),
    }


def test_a_rotation_sticks_on_a_machine_that_saw_it(
    split: Checkout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 51, 3: the release key is revoked by root v2 (rotate-root). An old checkout (root v1) on a machine
    that verified under v2 refuses an index the revoked key signed."""
    old_checkout = tmp_path / "old-keys"
    old_checkout.mkdir()
    for name in ("release-root.json", "release.pub"):
        (old_checkout / name).write_bytes((split.folder / "keys" / name).read_bytes())
    released(split, "a" * 40, "v9.9")
    keys_dir = split.folder / "keys"
    made = split.release(
        "keygen", "--key", str(keys_dir / "release2.key"), "--public-key", str(keys_dir / "release2.pub")
    )
    assert made.returncode == 0, made.stderr
    _rotate(split, "--public-key", str(keys_dir / "release2.pub"))
    policy = split.folder / "release-policy.yaml"  # the new release key joins the policy's keys (commit both)
    policy.write_text(
        policy.read_text().replace("  - keys/release.pub\n", "  - keys/release.pub\n  - keys/release2.pub\n")
    )
    assert Metadata[Root].from_bytes((keys_dir / "release-root.json").read_bytes()).signed.version == 2
    new = split.candidate("candidate-new", "c" * 40)
    signed = split.release(
        "sign", f"{split.repository}@{new}", "--key", str(keys_dir / "release2.key"),
        "--public-key", str(keys_dir / "release2.pub"), "--sbom", str(split.folder / "sbom.cdx.json"),
        "--variant", "cu128-runtime", "--source-ref", "refs/tags/v9.9.0", "--tag", "v9.10", "--require-pinned-base",
        "--builder-id", "https://github.com/pytorch-cuda/pytorch-cuda/.github/workflows/release.yml",
        "--timestamp-key", str(keys_dir / "timestamp.key"), "--timestamp-public-key", str(keys_dir / "timestamp.pub"),
    )  # fmt: skip
    assert signed.returncode == 0, signed.stderr
    document = registry.manifest(split.path, "release-index").body
    titles = {l["annotations"]["org.opencontainers.image.title"] for l in document["layers"]}  # noqa: E741
    assert {"2.root.json", "root.json"} <= titles  # the rotation is published beside the index
    # the machine verifies once under v2 (the index names v9.9 still), then the attacker, with the revoked key,
    # writes an index under root v1 alone and runs an old checkout on that machine
    seen = split.release("verify", f"{split.repository}@{new}")
    assert seen.returncode == 0, seen.stderr  # this machine now trusts root v2
    cache = split.cache / "pytorch-cuda" / "release-index"
    assert any(cache.glob("*/root_history/2.root.json"))
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, PASSPHRASE)
    revoked = keys.signer(str(keys_dir / "release.key"), keys_dir / "release.pub")
    stamp = keys.signer(str(keys_dir / "timestamp.key"), keys_dir / "timestamp.pub")
    v1 = load_root(old_checkout / "release-root.json")
    files = release_index.updated(None, v1, release_index.IndexSigners(stamp, revoked),
                                  [release_index.Binding("v9.9", new, 1)], repository=split.repository,
                                  now=datetime.now(UTC), lifetime=timedelta(hours=1))  # fmt: skip
    files = {name: data for name, data in files.items() if name != "2.root.json"}
    files.update(_high_versions(files, revoked, stamp))  # above every version the machine saw: no rollback
    artifact = release_index.artifact(files)
    client = _client(split)
    for blob in artifact.blobs:
        client.push_blob(reference(f"{split.repository}:x"), blob.data)
    client.push_manifest(
        f"{split.repository}:release-index", artifact.raw, "application/vnd.oci.image.manifest.v1+json"
    )
    (keys_dir / "release-root.json").write_bytes((old_checkout / "release-root.json").read_bytes())  # old checkout
    failed = split.release("verify", f"{split.repository}:v9.9")
    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    text = folded(failed.stderr)
    assert "release-index signature: expected a signature by a key the trusted root names" in text
    assert "(or no longer names: a revoked key)" in text


def test_an_expired_root_blames_the_root_and_root_status_warns(
    split: Checkout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    released(split, "a" * 40, "v9.9")
    status = split.release("root-status")
    assert status.returncode == 0, status.stderr
    assert "release-root.json v1 expires " in status.stdout
    warned = split.release("root-status", "--warn-days", "400")
    assert warned.returncode == 1
    assert "`build.py release rotate-root --root-key" in folded(warned.stderr)
    keys_dir = split.folder / "keys"
    root = Metadata[Root].from_bytes((keys_dir / "release-root.json").read_bytes())
    root.signed.expires = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    root.signatures.clear()
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, PASSPHRASE)
    root.sign(keys.signer(str(keys_dir / "root.key"), keys_dir / "root.pub"))
    (keys_dir / "release-root.json").write_bytes(root.to_bytes())
    failed = fresh(split, tmp_path, "user").release("verify", f"{split.repository}:v9.9")
    assert failed.returncode == 1
    text = folded(failed.stderr)
    assert "release-index root.expires: expected a date after now" in text
    assert "Fix: this is not the image's fault: the index's root of trust expired" in text
    assert "do not use this image" not in text
