"""Pack, stage and receive a small stack here: every part checked, a missing part waited for, a corrupt one refused,
and the venv made from the parts carries the contract's marker (zstandard is the carried wheel there; here the zstd
command stands in for it)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytorch_cuda.errors import UserError
from pytorch_cuda_contract.carried_stack import find_carried_stack
from shipped_stack import pack, plan, receive
from shipped_stack.layout import PARTS_INDEX

PART_BYTES = 4096


class _ZstdCommand:
    """What receive needs of zstandard: ZstdDecompressor(max_window_size).stream_reader(stream)."""

    class ZstdDecompressor:
        def __init__(self, max_window_size: int) -> None:
            self.window = max_window_size

        @contextlib.contextmanager
        def stream_reader(self, stream: receive._Concatenated) -> Iterator[io.BytesIO]:
            data = b"".join(iter(lambda: stream.read(65536), b""))
            done = subprocess.run(["zstd", "-d", "--long=31", "-c"], input=data, capture_output=True, check=True)
            yield io.BytesIO(done.stdout)


@pytest.fixture
def packed(tmp_path: Path) -> tuple[pack.PackIndex, Path]:
    site = tmp_path / "site"
    (site / "stackpkg").mkdir(parents=True)
    (site / "stackpkg" / "__init__.py").write_bytes(os.urandom(3 * PART_BYTES))  # incompressible: several parts
    (site / "stackpkg-1.0.dist-info").mkdir()
    (site / "stackpkg-1.0.dist-info" / "METADATA").write_text("Name: stackpkg\nVersion: 1.0\n")
    (site / "bin").mkdir()
    (site / "bin" / "script").write_text("#!/build/machine/python\n")
    folder = tmp_path / "pack"
    folder.mkdir()
    parts = pack.compress(site, folder, PART_BYTES)
    (folder / "carrier").mkdir()
    index = pack.PackIndex(
        variant="cu128-runtime",
        lock="shipped_stack/locks/test.lock",
        lock_sha256="ab" * 32,
        python=f"{sys.version_info.major}.{sys.version_info.minor}",
        zstd_window_log=31,
        parts=tuple(parts),
        packed_bytes=sum(p.bytes for p in parts),
        unpacked_bytes=0,
        timings_s={},
    )
    (folder / PARTS_INDEX).write_text(json.dumps(index.as_json()))
    return index, folder


def _staged(index: pack.PackIndex, folder: Path, checkout: Path) -> list[plan.Call]:
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    return plan.stage(index, folder, send_dir=checkout / "send", checkout=checkout)


def test_parts_are_small_hashed_and_rejoin(packed: tuple[pack.PackIndex, Path]) -> None:
    index, folder = packed
    assert len(index.parts) >= 3
    assert all(p.bytes <= PART_BYTES for p in index.parts)
    assert pack.PackIndex.from_json(json.loads((folder / PARTS_INDEX).read_text())) == index


def test_parts_cut_again_rejoin_to_the_same_stream(packed: tuple[pack.PackIndex, Path]) -> None:
    index, folder = packed
    before = b"".join((folder / p.name).read_bytes() for p in index.parts)
    smaller = pack.resplit(index, folder, PART_BYTES // 3)
    assert len(smaller.parts) > len(index.parts)
    assert all(p.bytes <= PART_BYTES // 3 for p in smaller.parts)
    assert b"".join((folder / p.name).read_bytes() for p in smaller.parts) == before
    for part in smaller.parts:
        assert hashlib.sha256((folder / part.name).read_bytes()).hexdigest() == part.sha256
    assert pack.PackIndex.from_json(json.loads((folder / PARTS_INDEX).read_text())) == smaller
    assert sorted(p.name for p in folder.glob("stack.tar.zst.*")) == [p.name for p in smaller.parts]


def test_the_checkout_counts_its_disk_blocks(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for number in range(20):
        (tmp_path / f"small-{number}.txt").write_text("x")  # 1 byte each, a block each on disk
    assert plan.checkout_bytes(tmp_path) >= 20 * 512


def test_each_call_carries_one_part_and_the_index(packed: tuple[pack.PackIndex, Path], tmp_path: Path) -> None:
    index, folder = packed
    calls = _staged(index, folder, tmp_path / "checkout")
    assert [c.number for c in calls] == list(range(len(index.parts) + 1))
    assert calls[0].command == "python3 -m shipped_stack receive send/carrier"
    assert calls[1].command == "python3 -m shipped_stack receive send/part-001"
    assert (tmp_path / "checkout" / "send" / "carrier" / "carrier").is_dir()
    assert not (tmp_path / "checkout" / "send" / "part-001" / "carrier").exists()
    assert all((tmp_path / "checkout" / c.carry / PARTS_INDEX).exists() for c in calls)


def test_a_call_over_the_limit_is_refused(packed: tuple[pack.PackIndex, Path], tmp_path: Path) -> None:
    index, folder = packed
    subprocess.run(["git", "init", "-q", str(tmp_path / "c")], check=True)
    with pytest.raises(UserError, match="over the 0 MiB one device call takes"):
        plan.stage(index, folder, send_dir=tmp_path / "c" / "send", checkout=tmp_path / "c", limit=100)


def test_receive_waits_refuses_corruption_and_makes_the_venv(
    packed: tuple[pack.PackIndex, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index, folder = packed
    checkout, base = tmp_path / "checkout", tmp_path / "store"
    calls = _staged(index, folder, checkout)
    assert receive.receive(checkout / calls[0].carry, base).have == ()
    first = receive.receive(checkout / calls[1].carry, base)
    assert first.have == (index.parts[0].name,)
    assert first.missing == tuple(p.name for p in index.parts[1:])

    corrupt = checkout / calls[2].carry / index.parts[1].name
    data = bytearray(corrupt.read_bytes())
    data[0] ^= 0xFF
    corrupt.unlink()  # a hard link to the pack: write a new file
    corrupt.write_bytes(bytes(data))
    with pytest.raises(receive.ReceiveError, match=f"part {index.parts[1].name} arrived corrupt"):
        receive.receive(checkout / calls[2].carry, base)

    (checkout / calls[2].carry / index.parts[1].name).unlink()
    os.link(folder / index.parts[1].name, checkout / calls[2].carry / index.parts[1].name)
    for call in calls[2:]:
        done = receive.receive(checkout / call.carry, base)
    assert done.missing == ()

    monkeypatch.setattr(receive, "_zstandard", lambda store: _ZstdCommand)
    prefix = receive.make_venv(done.store, current=base / "current")
    site = prefix / "lib" / f"python{index.python}" / "site-packages"
    assert (site / "stackpkg" / "__init__.py").stat().st_size == 3 * PART_BYTES
    assert not (site / "bin").exists(), "bin/ names the build machine's Python: it is left out"
    marker = find_carried_stack(str(prefix))
    assert marker is not None
    assert (marker.variant, marker.image_python, marker.image_venv) == ("cu128-runtime", "3.13", "/opt/pytorch")
    assert marker.packages == {"stackpkg": "1.0"}
    assert (base / "current").resolve() == prefix.resolve()
    pyvenv = (prefix / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in pyvenv


def test_a_part_changed_after_it_arrived_fails_the_unpack(
    packed: tuple[pack.PackIndex, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index, folder = packed
    checkout, base = tmp_path / "checkout", tmp_path / "store"
    for call in _staged(index, folder, checkout):
        done = receive.receive(checkout / call.carry, base)
    kept = done.store / "parts" / index.parts[-1].name
    kept.write_bytes(b"\0" * kept.stat().st_size)
    monkeypatch.setattr(receive, "_zstandard", lambda store: _ZstdCommand)
    with pytest.raises(receive.ReceiveError, match="changed on disk since it was received"):
        receive.make_venv(done.store, current=base / "current")
