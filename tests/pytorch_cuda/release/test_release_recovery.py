"""Issue 51: an expired release index, recovered with the documented command (`build.py release recover-index`,
the timestamp key, the committed floor), on the loopback registry with the split keys; and a rollback attempted
during the recovery, refused with a named reason. The outage is met two hours after the hour-lived indexes were
signed on a clock moved ahead (Checkout.later), not waited for."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import local_registry as registry
from tests.support.release_checkout import Checkout, folded, fresh, make_checkout, refresh, released, skopeo_copy
from tests.support.tiny_images import unique_repository

pytestmark = pytest.mark.integration

LIFETIME = 3600  # seconds: both indexes' timestamps (the default of the tests' `sign`)
OUTAGE = 2 * LIFETIME  # how much later the outage is met: both indexes expired (Checkout.later moves the clock)


def _recover(checkout: Checkout, key: str = "timestamp") -> tuple[int, str]:
    keys_dir = checkout.folder / "keys"
    done = checkout.release("recover-index", "--key", str(keys_dir / f"{key}.key"),
                            "--public-key", str(keys_dir / f"{key}.pub"))  # fmt: skip
    return done.returncode, folded(done.stderr) or done.stdout


def test_an_expired_index_is_recovered_and_a_rollback_during_recovery_refused(tmp_path: Path) -> None:
    split = make_checkout(tmp_path / "checkout", unique_repository(), split=True)
    old = released(split, "a" * 40, "v9.9", LIFETIME)
    old_index = registry.manifest(split.path, "release-index").digest
    # still fresh: nothing to recover (exit 2, and nothing written)
    status, text = _recover(split)
    assert status == 2, text
    assert "has not expired: nothing to recover" in text
    assert registry.manifest(split.path, "release-index").digest == old_index
    new = released(split, "b" * 40, "v9.9", LIFETIME)
    real_index = registry.manifest(split.path, "release-index").digest
    recorded = split.release("record-floor")  # the reviewed commit after the release
    assert recorded.returncode == 0, recorded.stderr
    assert "targets v2, snapshot v2" in recorded.stdout
    outage = split.later(OUTAGE)  # both indexes expired, nothing re-signed them
    # expired: verify refuses it, and the daily refresh never re-signs it
    user = fresh(outage, tmp_path, "user")
    expired = user.release("verify", f"{split.repository}:v9.9")
    assert expired.returncode == 1
    assert "release-index timestamp.expires: expected a date after now" in folded(expired.stderr)
    status, text = refresh(outage)
    assert status == 1, text
    assert "refresh-index refused the release index" in text
    assert "timestamp.expires" in text
    # the attacker, during the outage: put back the older (expired too) index and move v9.9 to the old image
    skopeo_copy(f"{split.repository}@{old_index}", f"{split.repository}:release-index")
    skopeo_copy(f"{split.repository}@{old}", f"{split.repository}:v9.9")
    status, text = _recover(fresh(outage, tmp_path, "operator"))  # an operator's machine with no cache
    assert status == 1, text
    assert (
        "recover-index refused the expired release index: release-index targets.json: expected the committed "
        "floor's targets (v2, sha256 " in text
    )
    assert "found v1, sha256" in text
    assert "recovery revives only the reviewed floor's index" in text
    assert "nothing was written" in text
    assert registry.manifest(split.path, "release-index").digest == old_index
    # the release key is not the key of a recovery: refused before anything is written (exit 2, its role named)
    skopeo_copy(f"{split.repository}@{real_index}", f"{split.repository}:release-index")
    status, text = _recover(fresh(outage, tmp_path, "operator-2"), key="release")
    assert status == 2, text
    assert "(--key) is not a timestamp key of release-root.json (root v1)" in text
    assert registry.manifest(split.path, "release-index").digest == real_index
    # recovered: the index of the last release, with a fresh timestamp; the tag put back where it belongs
    skopeo_copy(f"{split.repository}@{new}", f"{split.repository}:v9.9")
    status, text = _recover(fresh(outage, tmp_path, "operator-3"))
    assert status == 0, text
    assert "targets v2 (the committed floor's), timestamp v3 valid until" in text
    verified = fresh(outage, tmp_path, "user-2").release("verify", f"{split.repository}:v9.9")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.rstrip().endswith(f"pull {split.repository}@{new}")
    # and the rolled-back tag still fails on the recovered index (bound to the new image)
    skopeo_copy(f"{split.repository}@{old}", f"{split.repository}:v9.9")
    moved = fresh(outage, tmp_path, "user-3").release("verify", f"{split.repository}:v9.9")
    assert moved.returncode == 1
    assert 'release-index targets["v9.9"]: expected ' + new in folded(moved.stderr)
