"""Issue 39's attacks on the release index and the reference forms, on the loopback registry with small real images
and real keys: each is refused with a named reason (exit 1; a reference without tag or digest is bad input, exit 2).
The index is rooted in the checkout's committed root, names its repository, lives two days unless re-signed, and is
written by compare-and-swap."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from pytorch_cuda.oci.registry_client import RegistryClient, reference
from pytorch_cuda.release import keys, release_index
from pytorch_cuda.release.release_policy import load_policy
from pytorch_cuda.release.signing import IndexPlan, write_signature_index
from tests.support import local_registry as registry
from tests.support.release_checkout import PASSPHRASE, Checkout, folded, make_checkout, pushed_candidates, skopeo_copy
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Release:
    checkout: Checkout
    tested: str  # bound to v9.9
    old: str  # signed, bound to v9.8

    @property
    def repository(self) -> str:
        return self.checkout.repository


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    checkout, (old, tested) = pushed_candidates(tmp_path_factory, "old", "tested")
    for digest, tag in ((old, "v9.8"), (tested, "v9.9")):
        checkout.sign(f"{checkout.repository}@{digest}", "release", tag)
        promoted = checkout.release("promote", f"{checkout.repository}@{digest}", "--tag", tag)
        assert promoted.returncode == 0, promoted.stderr
    return Release(checkout, tested, old)


def on_a_fresh_machine(checkout: Checkout, tmp_path: Path) -> Checkout:
    """The same checkout on a machine that never verified anything (CI, a container, a first-time user)."""
    return dataclasses.replace(checkout, cache=tmp_path / "fresh-cache")


def refused(checkout: Checkout, image: str, status: int = 1) -> str:
    failed = checkout.release("verify", image)
    assert failed.returncode == status, (failed.returncode, failed.stdout, failed.stderr)
    return folded(failed.stderr)


def test_each_reference_form_follows_the_one_rule(release: Release) -> None:
    repository, tested, old = release.repository, release.tested, release.old
    by_tag = release.checkout.release("verify", f"{repository}:v9.9")
    assert by_tag.returncode == 0, by_tag.stderr
    assert by_tag.stdout.rstrip().endswith(f"pull {repository}@{tested}")
    both = json.loads(release.checkout.release("verify", f"{repository}:v9.9@{tested}", "--json").stdout)
    assert (both["digest"], both["tags"], both["pull"]) == (tested, ["v9.9"], f"{repository}@{tested}")
    by_digest = json.loads(release.checkout.release("verify", f"{repository}@{old}", "--json").stdout)
    assert by_digest["tags"] == ["v9.8"]  # says which tags bind it
    text = refused(release.checkout, f"{repository}:v9.9@{old}")  # an older signed release under v9.9's name
    assert f'release-index targets["v9.9"]: expected {tested}, found {old}' in text
    assert "the reference's @digest is not the one v9.9 is bound to" in text
    text = refused(release.checkout, repository, status=2)
    assert f"{repository} names neither a tag nor a digest: verify never assumes :latest" in text


def test_an_old_index_replayed_on_a_fresh_machine_is_refused(tmp_path: Path) -> None:
    """The timestamp lives two days (here an hour): past that, an index put back is refused on any machine, also
    one that never saw the newer index; within it (the documented freeze window) a fresh machine cannot tell. Past
    it is met on a clock moved ahead (Checkout.later), not waited for."""
    checkout = make_checkout(tmp_path / "checkout", unique_repository())
    old = checkout.candidate("candidate-old", "a" * 40)
    new = checkout.candidate("candidate-new", "b" * 40)
    checkout.sign(f"{checkout.repository}@{old}", "release", "v1", lifetime=3600)
    old_index = registry.manifest(checkout.path, "release-index").digest
    checkout.sign(f"{checkout.repository}@{new}", "release", "v1", lifetime=3 * 3600)  # before the old one expires
    skopeo_copy(f"{checkout.repository}@{old_index}", f"{checkout.repository}:release-index")
    skopeo_copy(f"{checkout.repository}@{old}", f"{checkout.repository}:v1")
    text = refused(on_a_fresh_machine(checkout.later(2 * 3600), tmp_path), f"{checkout.repository}:v1")
    assert "failed verification: release-index timestamp.expires: expected a date after now" in text
    assert "(the index was not re-signed in time: a frozen or replayed index)" in text


def test_another_repository_s_index_is_refused_and_does_not_poison_the_machine(
    release: Release, tmp_path: Path
) -> None:
    """Signed by the same key for a scratch repository (and re-signed there to higher versions), copied in."""
    checkout = on_a_fresh_machine(release.checkout, tmp_path)
    assert checkout.release("verify", f"{release.repository}:v9.9").returncode == 0
    real_index = registry.manifest(checkout.path, "release-index").digest
    scratch = unique_repository()
    dev = checkout.candidate("dev", "d" * 40, scratch)
    for tag in ("v9.9", "v9.9-a", "v9.9-b", "v9.9-c"):  # versions above the real index's
        checkout.sign(f"{scratch}@{dev}", "release", tag)
    skopeo_copy(f"{scratch}:release-index", f"{release.repository}:release-index")
    text = refused(checkout, f"{release.repository}:v9.9")
    assert f"release-index targets.x-pytorch-cuda-repository: expected {release.repository}, found {scratch}" in text
    assert "(an index signed for another repository, copied here)" in text
    skopeo_copy(f"{release.repository}@{real_index}", f"{release.repository}:release-index")
    after = checkout.release("verify", f"{release.repository}:v9.9")
    assert after.returncode == 0, after.stderr  # the refused index never reached the machine's rollback state


def test_an_index_moved_between_read_and_write_is_extended_again_and_both_bindings_hold(
    release: Release, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real interleaving: another `sign --tag` writes the index after this writer read it. This writer sees the
    move before its write, starts again from the newer index, and both writers end with their bindings."""
    folder, repository = release.checkout.folder, release.repository
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, PASSPHRASE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(release.checkout.cache))
    signer = keys.signer(str(folder / "keys" / "release.key"), folder / "keys" / "release.pub")
    plan = IndexPlan("release-index", load_policy(folder / "release-policy.yaml").trusted_root(), timedelta(hours=1))
    prepared = release_index.updated
    raced: list[bool] = []

    def racing(*args: object, **kwargs: object) -> dict[str, bytes]:
        files = prepared(*args, **kwargs)  # type: ignore[arg-type]
        if not raced:
            raced.append(True)
            release.checkout.sign(f"{repository}@{release.old}", "release", "v9.8-other-writer")
        return files

    monkeypatch.setattr(release_index, "updated", racing)
    client = RegistryClient.for_ref(reference(f"{repository}:x"))
    binding = release_index.Binding("v9.9-late", release.tested, 1)
    write_signature_index(client, repository, plan, release_index.IndexSigners(signer, signer), [binding])
    monkeypatch.setattr(release_index, "updated", prepared)
    found = json.loads(release.checkout.release("verify", f"{repository}@{release.old}", "--json").stdout)
    assert found["tags"] == ["v9.8", "v9.8-other-writer"]  # the other writer's binding stands
    late = json.loads(release.checkout.release("verify", f"{repository}@{release.tested}", "--json").stdout)
    assert late["tags"] == ["v9.9", "v9.9-late"]  # and so does this writer's
