"""Issue 51: a writer outside release.yml's concurrency group that stalls between its last check of the index and its
PUT. Meanwhile another release (a real `build.py release sign --tag` process on the split keys) reads the index,
writes it, reads it back 1 s later and exits 0. Then the late writer's PUT lands, built on the index of before: it
reads back its own index, and before the journal (index_journal.py) it exited 0 too, the other release's binding
lost. Now it finds the other write in the journal and writes again with both bindings (sign --tag), or re-signs the
other write's index (refresh-index, the timestamp key alone); a fresh machine verifies both tags."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.oci.registry_client import RegistryClient, reference
from pytorch_cuda.release import keys, release_index, signing
from pytorch_cuda.release.release_policy import load_policy
from pytorch_cuda.release.signing import IndexPlan, write_signature_index
from tests.support import local_registry as registry
from tests.support.release_checkout import PASSPHRASE, Checkout, fresh, make_checkout, released
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration

STALL_SECONDS = 3.0  # the late writer's pause, after its last check, before its PUT (the 3 s gap)


def _late_write(checkout: Checkout, monkeypatch: pytest.MonkeyPatch, late: str, other: Checkout, image: str) -> float:
    """The late writer (`late`: "sign" binds v9.8 to a signed image; "refresh" re-signs the timestamp) stalls at
    its PUT while the other release, on a machine of its own (`other`), binds v9.7 to `image` and exits 0; the
    seconds the other release took."""
    monkeypatch.setenv(keys.PASSPHRASE_VARIABLE, PASSPHRASE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(checkout.cache))
    folder = checkout.folder / "keys"
    timestamp = keys.signer(str(folder / "timestamp.key"), folder / "timestamp.pub")
    release = keys.signer(str(folder / "release.key"), folder / "release.pub")
    plan = IndexPlan("release-index", load_policy(checkout.folder / "release-policy.yaml").trusted_root(),
                     timedelta(hours=1))  # fmt: skip
    client = RegistryClient.for_ref(reference(f"{checkout.repository}:x"))
    bindings: list[release_index.Binding] = []
    signers = release_index.IndexSigners(timestamp)
    if late == "sign":
        digest = checkout.candidate("candidate-late", "c" * 40)
        checkout.sign(f"{checkout.repository}@{digest}", "release")  # signed and attested, not yet bound
        found = client.manifest(f"{checkout.repository}@{digest}")
        assert found is not None
        bindings = [release_index.Binding("v9.8", digest, len(found.raw))]
        signers = release_index.IndexSigners(timestamp, release)
    took: list[float] = []

    def stalled(original: Callable[..., Any]) -> Callable[..., Any]:
        def put(*args: Any, **kwargs: Any) -> Any:
            if not took:  # the first index PUT: the other release runs whole, then STALL_SECONDS pass
                started = time.monotonic()
                signed = other.sign(f"{checkout.repository}@{image}", "release", "v9.7")
                assert signed.returncode == 0  # it exits 0: it read its binding back
                took.append(time.monotonic() - started)
                time.sleep(max(0.0, STALL_SECONDS - took[0]))
            return original(*args, **kwargs)

        return put

    monkeypatch.setattr(signing, "_push", stalled(signing._push))
    write_signature_index(client, checkout.repository, plan, signers, bindings,
                          verb="sign" if late == "sign" else "refresh-index")  # fmt: skip
    monkeypatch.undo()
    assert took
    return took[0]


@pytest.mark.parametrize("late", ["sign", "refresh"])
def test_a_late_writer_outside_the_group_loses_no_binding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: str
) -> None:
    checkout = make_checkout(tmp_path / "checkout", unique_repository(), split=True)
    first = released(checkout, "a" * 40, "v9.9")  # the index exists, v9.9 bound
    other = checkout.candidate("candidate-other", "b" * 40)
    checkout.sign(f"{checkout.repository}@{other}", "release")
    took = _late_write(checkout, monkeypatch, late, fresh(checkout, tmp_path, "other-machine").as_typed(), other)
    assert took >= 1.0  # the other release wrote and read back inside the late writer's stall
    user = fresh(checkout, tmp_path, "user")  # a machine that never saw the index
    promoted = user.release("promote", f"{checkout.repository}@{other}", "--tag", "v9.7")
    assert promoted.returncode == 0, promoted.stderr  # the other release's tag is still bound
    for tag, digest in (("v9.9", first), ("v9.7", other)):
        verified = user.release("verify", f"{checkout.repository}:{tag}")
        assert verified.returncode == 0, (tag, verified.stderr)
        assert verified.stdout.rstrip().endswith(f"pull {checkout.repository}@{digest}")
    if late == "sign":
        late_digest = registry.manifest(checkout.path, "candidate-late").digest
        bound = user.release("promote", f"{checkout.repository}@{late_digest}", "--tag", "v9.8")
        assert bound.returncode == 0, bound.stderr  # and the late writer's own binding holds
