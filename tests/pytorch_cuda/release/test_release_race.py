"""Issue 51: two releases racing on one tag, on the loopback registry, one of them from outside release.yml's
concurrency group (nothing serialises them). Writer A binds v9.9 and v9.9-runtime to its image (the library step
that `sign --tag` runs, so the race can be placed exactly); writer B, a real `build.py release sign --tag` and
`promote` of another image, lands in A's window: between A's read and its write, or after A's write, before its
read-back. The loser (A) is refused with a named reason and binds nothing; the winner's tags are bound and promoted
whole, and verify agrees with every tag: nothing half-tagged."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.oci.registry_client import RegistryClient, reference
from pytorch_cuda.release import keys, release_index, signing
from pytorch_cuda.release.index_conflict import IndexConflictError
from pytorch_cuda.release.release_policy import load_policy
from pytorch_cuda.release.signing import IndexPlan, write_signature_index
from tests.support import local_registry as registry
from tests.support.release_checkout import PASSPHRASE, Checkout, folded, make_checkout
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration

TAGS = ("v9.9", "v9.9-runtime")


def _signed(checkout: Checkout, revision: str) -> str:
    digest = checkout.candidate(f"candidate-{revision[0]}", revision)
    checkout.sign(f"{checkout.repository}@{digest}", "release")  # signed and attested, no tag bound yet
    return digest


def _release_b(checkout: Checkout, digest: str) -> None:
    """The other release, from outside the concurrency group: the documented commands, as a process of its own."""
    checkout.sign(f"{checkout.repository}@{digest}", "release", *TAGS)
    args = [arg for tag in TAGS for arg in ("--tag", tag)]
    promoted = checkout.release("promote", f"{checkout.repository}@{digest}", *args)
    assert promoted.returncode == 0, promoted.stderr


def _race(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> tuple[Checkout, str, str, str]:
    checkout = make_checkout(tmp_path / "checkout", unique_repository())
    first = _signed(checkout, "0" * 40)
    checkout.sign(f"{checkout.repository}@{first}", "release", "v9.8")  # the index exists, v9.9 unbound
    a, b = _signed(checkout, "a" * 40), _signed(checkout, "b" * 40)
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, PASSPHRASE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(checkout.cache))
    folder = checkout.folder
    signer = keys.signer(str(folder / "keys" / "release.key"), folder / "keys" / "release.pub")
    plan = IndexPlan("release-index", load_policy(folder / "release-policy.yaml").trusted_root(), timedelta(hours=1))
    client = RegistryClient.for_ref(reference(f"{checkout.repository}:x"))
    found = client.manifest(f"{checkout.repository}@{a}")
    assert found is not None
    raced: list[bool] = []

    def hooked(original: Callable[..., Any]) -> Callable[..., Any]:
        def racing(*args: Any, **kwargs: Any) -> Any:
            if not raced:
                raced.append(True)
                _release_b(checkout.as_typed(), b)  # a process of its own: not through these hooks
            return original(*args, **kwargs)

        return racing

    if where == "between read and write":
        monkeypatch.setattr(release_index, "updated", hooked(release_index.updated))
    else:  # after A's write, before its read-back
        monkeypatch.setattr(signing, "_served", hooked(signing._served))
    bindings = [release_index.Binding(tag, a, len(found.raw)) for tag in TAGS]
    with pytest.raises(IndexConflictError) as refused:
        write_signature_index(client, checkout.repository, plan, release_index.IndexSigners(signer, signer), bindings)
    assert raced
    monkeypatch.undo()
    return checkout, a, b, " ".join(refused.value.paragraph().split())


@pytest.mark.parametrize("where", ["between read and write", "after the write, before the read-back"])
def test_two_releases_racing_on_one_tag_the_loser_is_refused_and_nothing_is_half_tagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    checkout, a, b, said = _race(tmp_path, monkeypatch, where)
    assert f"another writer bound v9.9 to {b} in {checkout.repository}:release-index while this step was binding " \
        f"it to {a} (two releases racing on one tag): this step is refused, the other binding stands, and none of " \
        "this step's tags (v9.9, v9.9-runtime) is bound, so none may be promoted" in said  # fmt: skip
    # the loser's promote moves nothing (the index binds the winner's image)
    args = [arg for tag in TAGS for arg in ("--tag", tag)]
    lost = checkout.release("promote", f"{checkout.repository}@{a}", *args)
    assert lost.returncode == 1
    text = folded(lost.stderr)
    assert f"the release index binds v9.9 to {b}, v9.9-runtime to {b}, not to the tested {a}" in text
    assert "so no tag was moved" in text
    # nothing half-tagged: every tag serves the winner, and verify agrees on each, from a fresh machine
    for tag in TAGS:
        assert registry.manifest(checkout.path, tag).digest == b
        user = Checkout(checkout.folder, checkout.repository, tmp_path / f"user-{tag}")
        verified = user.release("verify", f"{checkout.repository}:{tag}")
        assert verified.returncode == 0, verified.stderr
        assert verified.stdout.rstrip().endswith(f"pull {checkout.repository}@{b}")
