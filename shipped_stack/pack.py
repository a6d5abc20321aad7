"""Here: install the host lock with --require-hashes into a folder, pack it (tar, zstd with a long window) into
parts of a size one device call carries, each with its sha256. The pack is kept between uses and made again only
when the host lock changes (it is keyed by the lock's sha256)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, Final, Protocol

from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.file_format import parse_lock
from pytorch_cuda.locks.writing import find_uv
from shipped_stack.layout import (
    HOST_PYTHON,
    LOCKS_DIR,
    PARTS_INDEX,
    PYTHON_PLATFORM,
    VARIANT,
    WORK_DIR,
    ZSTANDARD_LOCK,
    host_lock_path,
    stack_key,
)

ZSTD_LEVEL: Final = 12
ZSTD_WINDOW_LOG: Final = 31  # --long=31: the receiver must allow a 2 GiB window
CHUNK: Final = 4 << 20
Log = Callable[[str], None]


@dataclass(frozen=True)
class Part:
    name: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class PackIndex:
    """parts.json: what the receiver checks every part against, and how the pack was made."""

    variant: str
    lock: str
    lock_sha256: str
    python: str
    zstd_window_log: int
    parts: tuple[Part, ...]
    packed_bytes: int
    unpacked_bytes: int
    timings_s: dict[str, float]

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "parts": [asdict(part) for part in self.parts]}

    @staticmethod
    def from_json(data: dict[str, object]) -> PackIndex:
        raw_parts = data["parts"]
        assert isinstance(raw_parts, list)
        fields = {key: value for key, value in data.items() if key != "parts"}
        return PackIndex(parts=tuple(Part(**part) for part in raw_parts), **fields)  # type: ignore[arg-type]


def lock_sha256(variant: str = VARIANT) -> str:
    return hashlib.sha256(host_lock_path(variant).read_bytes()).hexdigest()


def pack_dir(variant: str = VARIANT) -> Path:
    return WORK_DIR / "packs" / stack_key(variant, lock_sha256(variant))


def cached(variant: str = VARIANT) -> PackIndex | None:
    """The kept pack of the current lock, when every part is there at its size; else None."""
    index_path = pack_dir(variant) / PARTS_INDEX
    if not index_path.exists():
        return None
    index = PackIndex.from_json(json.loads(index_path.read_text(encoding="utf-8")))
    folder = index_path.parent
    whole = all((folder / p.name).is_file() and (folder / p.name).stat().st_size == p.bytes for p in index.parts)
    return index if whole and index.lock_sha256 == lock_sha256(variant) else None


def _run(argv: list[str], what: str) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = " / ".join(result.stderr.strip().splitlines()[-4:])
        raise UserError(
            cause=f"{what} failed (exit {result.returncode}): {tail}",
            fix="check that PyPI is reachable and that the lock's hashes are PyPI's (`python -m shipped_stack lock`)",
        )


def install(lock: Path, target: Path) -> None:
    """uv installs every pin of `lock`, hash-checked, for the host's Python and platform, into `target`."""
    index = parse_lock(lock.read_text(encoding="utf-8")).index_url or "https://pypi.org/simple"
    shutil.rmtree(target, ignore_errors=True)
    # --link-mode=copy: files of their own, not hard links into uv's cache, which another install may touch while
    # tar reads them (tar then exits 1: "file changed as we read it")
    argv = [find_uv(), "pip", "install", "--quiet", "--no-config", "--link-mode=copy", "--target", str(target)]
    argv += ["--python-version", HOST_PYTHON, "--python-platform", PYTHON_PLATFORM, "--require-hashes", "--no-deps"]
    _run([*argv, "--index-url", index, "-r", str(lock)], f"installing {lock.name}")


def _tree_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())


class _Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


def _write_parts(stream: _Readable, folder: Path, part_bytes: int) -> list[Part]:
    parts: list[Part] = []
    chunk = stream.read(CHUNK)
    while chunk:
        name = f"stack.tar.zst.{len(parts) + 1:03d}"
        digest, size = hashlib.sha256(), 0
        with (folder / name).open("wb") as out:
            while chunk and size < part_bytes:
                piece, chunk = chunk[: part_bytes - size], chunk[part_bytes - size :]
                out.write(piece)
                digest.update(piece)
                size += len(piece)
                chunk = chunk or stream.read(CHUNK)
        parts.append(Part(name, size, digest.hexdigest()))
    return parts


def compress(site: Path, folder: Path, part_bytes: int) -> list[Part]:
    """tar (sorted, fixed owners and times; bin/ left out: its scripts name this machine's Python) | zstd, split."""
    tar_argv = ["tar", "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner"]
    tar_argv += ["--exclude=./bin", "-cf", "-", "-C", str(site), "."]
    zstd_argv = ["zstd", f"-{ZSTD_LEVEL}", f"--long={ZSTD_WINDOW_LOG}", "-T0", "-q", "-c"]
    if shutil.which("zstd") is None:
        raise UserError(cause="the zstd command is not installed", fix="apt-get install zstd")
    with (
        subprocess.Popen(tar_argv, stdout=subprocess.PIPE) as tar,
        subprocess.Popen(zstd_argv, stdin=tar.stdout, stdout=subprocess.PIPE) as zstd,
    ):
        assert tar.stdout is not None
        assert zstd.stdout is not None
        tar.stdout.close()
        parts = _write_parts(zstd.stdout, folder, part_bytes)
    if tar.returncode != 0 or zstd.returncode != 0:
        raise UserError(
            cause=f"packing failed: tar exit {tar.returncode}, zstd exit {zstd.returncode}", fix="see above"
        )
    return parts


class _Joined:
    """The parts of a pack read back as the one stream they were cut from."""

    def __init__(self, paths: list[Path]) -> None:
        self._paths = iter(paths)
        self._current: IO[bytes] | None = None

    def read(self, size: int, /) -> bytes:
        while True:
            if self._current is None:
                path = next(self._paths, None)
                if path is None:
                    return b""
                self._current = path.open("rb")
            data = self._current.read(size)
            if data:
                return data
            self._current.close()
            self._current = None


def resplit(index: PackIndex, folder: Path, part_bytes: int) -> PackIndex:
    """The same packed stream cut again into parts of ``part_bytes`` (each hashed anew), in place of the old parts:
    a smaller call size without packing again (compressing takes minutes)."""
    staging = folder / "resplit"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    stream = _Joined([folder / part.name for part in index.parts])
    parts = _write_parts(stream, staging, part_bytes)
    for part in index.parts:
        (folder / part.name).unlink()
    for part in parts:
        (staging / part.name).rename(folder / part.name)
    staging.rmdir()
    joined = replace(index, parts=tuple(parts))
    (folder / PARTS_INDEX).write_text(json.dumps(joined.as_json(), indent=1) + "\n", encoding="utf-8")
    return joined


def build(part_mib: int, log: Log, variant: str = VARIANT) -> PackIndex:
    """The pack of the current host lock: the kept one (cut again when its parts are not ``part_mib``), else made
    now (each step timed and logged)."""
    kept = cached(variant)
    if kept is not None and kept.parts[0].bytes != part_mib << 20:
        log(f"pack: the kept parts are {kept.parts[0].bytes / 2**20:.0f} MiB; cutting them again at {part_mib} MiB")
        kept = resplit(kept, pack_dir(variant), part_mib << 20)
    if kept is not None:
        log(f"pack: kept from an earlier run ({len(kept.parts)} parts, {kept.packed_bytes / 2**20:,.0f} MiB)")
        return kept
    folder = pack_dir(variant)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    timings: dict[str, float] = {}
    started = time.monotonic()
    log(f"pack: installing {host_lock_path(variant).name} with --require-hashes (about 4 GB of wheels)")
    install(host_lock_path(variant), folder / "site")
    install(LOCKS_DIR / ZSTANDARD_LOCK, folder / "carrier")
    for cffi in (folder / "carrier" / "zstandard").glob("_cffi*.so"):  # the C backend reads the parts: 11 MiB less
        cffi.unlink()
    timings["install"] = round(time.monotonic() - started, 1)
    unpacked = _tree_bytes(folder / "site")
    log(f"pack: installed {unpacked / 2**20:,.0f} MiB in {timings['install']} s; tar | zstd -{ZSTD_LEVEL} --long")
    started = time.monotonic()
    parts = compress(folder / "site", folder, part_mib << 20)
    timings["compress"] = round(time.monotonic() - started, 1)
    shutil.rmtree(folder / "site")
    index = PackIndex(
        variant=variant,
        lock=str(host_lock_path(variant).relative_to(WORK_DIR.parent)),
        lock_sha256=lock_sha256(variant),
        python=HOST_PYTHON,
        zstd_window_log=ZSTD_WINDOW_LOG,
        parts=tuple(parts),
        packed_bytes=sum(part.bytes for part in parts),
        unpacked_bytes=unpacked,
        timings_s=timings,
    )
    (folder / PARTS_INDEX).write_text(json.dumps(index.as_json(), indent=1) + "\n", encoding="utf-8")
    log(f"pack: {len(parts)} parts, {index.packed_bytes / 2**20:,.0f} MiB, in {timings['compress']} s")
    return index
