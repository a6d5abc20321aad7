"""Issue 39's "builder, proven" attacks on the build inputs, on the loopback registry with real keys: the provenance
records the pinned base and the sha256 of every lock the image was built from, and `verify` checks them against the
checkout it runs from. An image signed with the release key on a laptop (the key holder's own build) from an edited
lock or on another base, or signed without the base, is refused by name (exit 1); the untouched release verifies
with the documented command, in under 3 s."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.integration import ROOT
from tests.support.registry_images import push_image
from tests.support.release_checkout import Checkout, folded, pin_base, pushed_candidates, skopeo_copy
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration

LOCK = "images/cu128-runtime/requirements.lock"


@dataclass(frozen=True)
class Release:
    checkout: Checkout  # the repository's checkout: its committed locks and base pin
    tested: str  # released as v9.9

    @property
    def repository(self) -> str:
        return self.checkout.repository


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    checkout, (tested,) = pushed_candidates(tmp_path_factory, "tested")
    checkout.sign(f"{checkout.repository}@{tested}", "release", "v9.9")
    promoted = checkout.release("promote", f"{checkout.repository}@{tested}", "--tag", "v9.9")
    assert promoted.returncode == 0, promoted.stderr
    return Release(checkout, tested)


def elsewhere(checkout: Checkout, folder: Path) -> Checkout:
    """A copy of the checkout, with its keys (the release key holder's laptop), and a cache of its own."""
    shutil.copytree(checkout.folder, folder, symlinks=True, ignore=shutil.ignore_patterns("cache"))
    return dataclasses.replace(checkout, folder=folder, cache=folder / "cache")


def edit_lock(checkout: Checkout) -> None:
    lock = checkout.folder / LOCK
    lock.write_text(lock.read_text() + "evil-package==6.6.6 --hash=sha256:" + "6" * 64 + "\n")


def released(checkout: Checkout, digest: str, tag: str, *, pinned_base: bool = True) -> str:
    """Sign `digest` from `checkout`, bind `tag` to it in the index and point the tag at it: `REPOSITORY:TAG`."""
    checkout.sign(f"{checkout.repository}@{digest}", "release", tag, pinned_base=pinned_base)
    skopeo_copy(f"{checkout.repository}@{digest}", f"{checkout.repository}:{tag}")
    return f"{checkout.repository}:{tag}"


def refused(checkout: Checkout, image: str) -> str:
    failed = checkout.release("verify", image)
    assert failed.returncode == 1, (failed.returncode, failed.stdout, failed.stderr)
    return folded(failed.stderr)


def test_the_untouched_release_verifies_and_names_its_base_and_locks(release: Release) -> None:
    """The documented command, no flag. (Its time is measured apart, not asserted here: docs/release.md.)"""
    verified = release.checkout.release("verify", f"{release.repository}:v9.9")
    assert verified.returncode == 0, verified.stderr
    base = release.checkout.base
    assert base is not None
    line = f"cu128-runtime built on docker://{base.pinned(release.checkout.base_repository)} from the 6 locks"
    assert line in verified.stdout


def test_an_image_built_from_an_edited_lock_on_a_laptop_is_refused(release: Release, tmp_path: Path) -> None:
    """The key holder builds from an edited lock and signs: its provenance, honestly, records the edited lock."""
    laptop = elsewhere(release.checkout, tmp_path / "laptop")
    edit_lock(laptop)
    image = laptop.candidate("candidate-laptop", "c" * 40)
    tag = released(laptop, image, "v9.9-laptop")
    assert laptop.release("verify", tag).returncode == 0  # from its own checkout: its own inputs, verified
    text = refused(release.checkout, tag)
    ours = "sha256:" + hashlib.sha256((release.checkout.folder / LOCK).read_bytes()).hexdigest()
    assert f"provenance resolvedDependencies {LOCK}: expected {ours} (this checkout's), found sha256:" in text
    assert "(built from another lock than this checkout commits (an edited, older or newer lock))" in text
    assert "never with a commit the image's provenance names" in text
    assert f"git checkout {'c' * 40}" not in text  # the signer never picks the checkout that judges its image


def test_an_image_built_on_another_base_is_refused(release: Release, tmp_path: Path) -> None:
    laptop = elsewhere(release.checkout, tmp_path / "laptop")
    other_repository = unique_repository()
    other = push_image(other_repository, "trixie", "9" * 40)
    pin_base_again(laptop.folder, other.pinned(other_repository), other.config)
    laptop = dataclasses.replace(laptop, base=other, base_repository=other_repository)
    image = laptop.candidate("candidate-rebased", "d" * 40)
    text = refused(release.checkout, released(laptop, image, "v9.9-rebased"))
    ours = release.checkout.base
    assert ours is not None
    expected = f"docker://{ours.pinned(release.checkout.base_repository)} ({ours.config})"
    found = f"docker://{other.pinned(other_repository)} ({other.config})"
    assert f"provenance resolvedDependencies base: expected {expected}, matrix.yaml's pinned base 'trixie', " in text
    assert f"found {found} (built on another base than this checkout pins)" in text


def test_an_image_signed_without_its_base_is_refused(release: Release) -> None:
    image = release.checkout.candidate("candidate-unpinned", "e" * 40)
    text = refused(release.checkout, released(release.checkout, image, "v9.9-unpinned", pinned_base=False))
    assert "provenance resolvedDependencies base: expected docker://" in text
    assert "found none (the provenance records no base: signed without the pinned-base check)" in text


def test_a_checkout_whose_lock_moved_refuses_the_release_and_never_names_the_artifact_s_commit(
    release: Release, tmp_path: Path
) -> None:
    """Relocked after the release (main moved on): verify from there refuses, and sends the user to a checkout of
    their own choosing (the release tag from git), never to the commit the signed provenance names."""
    moved = elsewhere(release.checkout, tmp_path / "moved")
    edit_lock(moved)
    text = refused(moved, f"{release.repository}:v9.9")
    assert f"provenance resolvedDependencies {LOCK}: expected sha256:" in text
    assert "a checkout you chose yourself (the release tag's commit from the project's own git history" in text
    assert "a" * 40 not in text


def test_a_checkout_without_a_pinned_base_cannot_check_the_base_and_exits_2(release: Release, tmp_path: Path) -> None:
    unpinned = elsewhere(release.checkout, tmp_path / "unpinned")
    shutil.copy(ROOT / "matrix.yaml", unpinned.folder / "matrix.yaml")
    failed = unpinned.release("verify", f"{release.repository}:v9.9")
    assert failed.returncode == 2, (failed.returncode, failed.stderr)
    assert "this checkout's matrix.yaml pins no published base for 'trixie'" in folded(failed.stderr)


def pin_base_again(folder: Path, published: str, config: str) -> None:
    """Re-pin a checkout that is pinned already: back to the repository's matrix.yaml, then pinned to `published`."""
    shutil.copy(ROOT / "matrix.yaml", folder / "matrix.yaml")
    pin_base(folder, published, config)
