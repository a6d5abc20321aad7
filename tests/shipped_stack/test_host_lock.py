"""The host lock pins what the image's lock pins: the same names at the same versions, resolved from it."""

from __future__ import annotations

from pytorch_cuda.locks.file_format import parse_lock
from shipped_stack import host_lock
from shipped_stack.layout import host_lock_path, image_lock_path


def test_host_lock_has_the_image_locks_versions() -> None:
    assert host_lock.drift() == [], (
        f"{host_lock_path().name} drifted from the image's lock: run `python -m shipped_stack lock` and commit it"
    )


def test_host_lock_was_resolved_from_the_committed_image_lock() -> None:
    assert not host_lock.stale(), "the image's lock changed since the host lock was resolved: `shipped_stack lock`"


def test_every_host_pin_has_hashes() -> None:
    lock = parse_lock(host_lock_path().read_text(encoding="utf-8"))
    assert lock.entries
    assert all("--hash=sha256:" in entry.text for entry in lock.entries)


def test_drift_names_a_moved_pin(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    moved = tmp_path / "host.lock"
    moved.write_text(host_lock_path().read_text(encoding="utf-8").replace("torch==2.9.1", "torch==2.9.0"))
    monkeypatch.setattr(host_lock, "host_lock_path", lambda variant="": moved)
    assert host_lock.drift() == ["  torch 2.9.1 -> 2.9.0"]
    assert image_lock_path().exists()
