"""What every lock of `build.py lock` shares: where it lives, how uv is run, how it is written and diffed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda.locks.file_format import LOCK_NAME, UV_VERSION, LockFile, diff_versions, parse_lock
from pytorch_cuda.matrix.image_folders import variant_dir
from pytorch_cuda.matrix.variants import Variant

UvRunner = Callable[[list[str], dict[str, str]], subprocess.CompletedProcess[str]]
IndexProbe = Callable[[str], None]


@dataclass(frozen=True)
class LockChange:
    path: Path
    changes: tuple[str, ...]  # diff_versions lines; empty when nothing moved
    created: bool
    held: tuple[str, ...] = ()  # "soupsieve 4.1.4": kept at the committed version the release-age gate hides


def lock_path(root: Path, variant: Variant) -> Path:
    return variant_dir(root, variant) / LOCK_NAME


def index_of(variant: Variant) -> str:
    return str(variant.target.index).rstrip("/")


def provenance_problem(lock: LockFile, index: str, digest: str, inputs: str) -> str | None:
    """Why a committed lock is not the one its inputs make now: resolved on another index than the
    target's one (the dependency-confusion rule), or from `inputs` as they were before; None when it is."""
    if lock.index_url != index:
        return f"resolved from {lock.index_url}, but the target's index is {index}"
    if lock.input_digest != digest:
        return f"stale: {inputs} changed since it was locked"
    return None


def refuse_unreachable(variant: Variant, probe: IndexProbe, *, cause: str, command: str, then: str) -> None:
    """Probe the variant's one index; unreachable: an EngineError "`cause`: why", whose fix is to run
    `command` on a machine that reaches the index's host, followed by `then` (what to commit)."""
    index = index_of(variant)
    try:
        probe(index)
    except UserError as exc:
        raise EngineError(
            cause=f"{cause}: {exc.cause}",
            fix=f"run `{command}` on a machine where {urlsplit(index).hostname} is reachable{then}",
        ) from exc


def require_index(variant: Variant, relative: Path, probe: IndexProbe) -> None:
    """Probe the variant's one index before locking it; unreachable: say where to lock instead."""
    refuse_unreachable(
        variant,
        probe,
        cause=f"cannot lock {variant.key}",
        command=f"python build.py lock --target {variant.target_name}",
        then=f" and commit {relative}",
    )


def find_uv() -> str:
    beside = Path(sys.executable).parent / "uv"
    found = str(beside) if beside.exists() else shutil.which("uv")
    if found is None:
        raise UserError(
            cause="uv, which resolves the locks, is not installed",
            fix=f"install the pinned builder dependencies (`.venv/bin/pip install -e '.[test]'`, uv=={UV_VERSION})",
        )
    return found


def run_uv(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=600)


def compile_lock(argv: list[str], ca_bundle: Path | None, run: UvRunner, what: str) -> str:
    """Run `uv pip compile` (argv); its stdout, or one paragraph naming what could not be resolved."""
    env = dict(os.environ)
    if ca_bundle is not None:
        env["SSL_CERT_FILE"] = str(ca_bundle)
    result = run(argv, env)
    if result.returncode != 0:
        tail = " / ".join(result.stderr.strip().splitlines()[-4:])
        raise EngineError(
            cause=f"uv could not resolve {what} (exit {result.returncode}): {tail}",
            fix="check the pins in matrix.yaml against the index (the message names what is missing), then lock again",
        )
    return result.stdout


def _no_cutoff(index: str) -> str | None:
    return None


@dataclass(frozen=True)
class Resolver:
    """How `build.py lock` resolves: the CA bundle uv trusts, the probe that checks a variant's index before
    locking on it, what runs uv (`build.py bump` and `audit --fix` pass one that adds --refresh), and the
    release-age gate of every pin, transitive ones included: for an index, the upload time no file may be newer
    than (uv's --exclude-newer), or None where the gate does not apply (no min_release_age, or an index that
    serves no upload times)."""

    ca_bundle: Path | None
    probe: IndexProbe
    run: UvRunner = run_uv
    cutoff: Callable[[str], str | None] = _no_cutoff

    def compile(self, argv: list[str], what: str, *, index: str | None = None) -> str:
        cutoff = self.cutoff(index) if index else None
        return compile_lock([*argv, "--exclude-newer", cutoff] if cutoff else argv, self.ca_bundle, self.run, what)


def write_lock(path: Path, root: Path, text: str, held: tuple[str, ...] = ()) -> LockChange:
    """Write a lock; what moved against the one it replaces (diff_versions lines), and what was `held`."""
    old = parse_lock(path.read_text(encoding="utf-8")).versions() if path.exists() else {}
    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    moved = tuple(diff_versions(old, parse_lock(text).versions()))
    return LockChange(path.relative_to(root), moved, created, held)
