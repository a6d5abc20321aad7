"""`build.py --lock`: resolve each variant's requirements.txt into its hash-locked requirements.lock with uv.

Also checks a committed lock against what it was resolved from (`--check-render`), and refuses a
build whose variant has no lock, naming the index the lock needs.
"""

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
from pytorch_cuda.lockfile import (
    INSTALLER_LOCK,
    LOCK_NAME,
    PYPI_INDEX,
    TOOL_LOCKS,
    UV_VERSION,
    compile_argv,
    diff_versions,
    format_lock,
    input_digest,
    parse_lock,
)
from pytorch_cuda.manifest import requirements_txt
from pytorch_cuda.matrix import Matrix
from pytorch_cuda.render import StaleFile
from pytorch_cuda.variants import Variant

Runner = Callable[[list[str], dict[str, str]], subprocess.CompletedProcess[str]]
IndexProbe = Callable[[str], None]


@dataclass(frozen=True)
class LockChange:
    path: Path
    changes: tuple[str, ...]  # diff_versions lines; empty when nothing moved
    created: bool


def lock_path(root: Path, variant: Variant) -> Path:
    return root / "images" / variant.key / LOCK_NAME


def index_of(variant: Variant) -> str:
    return str(variant.target.index).rstrip("/")


def lock_problem(matrix: Matrix, variant: Variant, root: Path) -> str | None:
    """Why the committed lock cannot be used as it is (stale or from another index), or None."""
    path = lock_path(root, variant)
    if not path.exists():
        return None
    lock = parse_lock(path.read_text(encoding="utf-8"))
    index = index_of(variant)
    if lock.index_url != index:
        return f"resolved from {lock.index_url}, but the target's index is {index}"
    if lock.input_digest != input_digest(requirements_txt(matrix, variant), index):
        return "stale: requirements.txt changed since it was locked"
    return None


def stale_locks(matrix: Matrix, variants: list[Variant], root: Path) -> list[StaleFile]:
    """The committed locks that no longer match their requirements.txt or index (for --check-render)."""
    found = [(variant, lock_problem(matrix, variant, root)) for variant in variants]
    tools = [(tool, tool_lock_problem(root, tool)) for tool in TOOL_LOCKS]
    return [
        StaleFile(lock_path(root, v).relative_to(root), f"{why}; run `build.py --lock --target {v.target_name}`", "")
        for v, why in found
        if why
    ] + [StaleFile(tool, f"{why}; run `build.py --lock`", "") for tool, why in tools if why]


def require_lock(variant: Variant, root: Path, probe: IndexProbe) -> None:
    """Refuse to build a variant that has no lock; say whether its index can be reached from here.

    A child flavour (jupyter, devel) installs its few extras on top of its parent's locked venv,
    constrained by the parent's pins; it has no lock of its own."""
    path = lock_path(root, variant)
    if path.exists() or variant.flavour.parent is not None:
        return
    index = index_of(variant)
    relative = path.relative_to(root)
    try:
        probe(index)
    except UserError as exc:
        raise EngineError(
            cause=f"{relative} does not exist, and it cannot be made here: {exc.cause}",
            fix=f"run `python build.py --lock --target {variant.target_name}` on a machine where "
            f"{urlsplit(index).hostname} is reachable, commit {relative}, then build",
        ) from exc
    raise UserError(
        cause=f"{relative} does not exist; a build installs only hash-locked packages",
        fix=f"run `python build.py --lock --target {variant.target_name}` and commit {relative}, then build",
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


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=600)


def _compile(argv: list[str], ca_bundle: Path | None, run: Runner, what: str) -> str:
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


def refresh_lock(
    matrix: Matrix,
    variant: Variant,
    root: Path,
    *,
    ca_bundle: Path | None,
    probe: IndexProbe,
    run: Runner = _run,
) -> LockChange:
    """Resolve the variant's requirements.txt on its one index and write its lock; say what changed."""
    path = lock_path(root, variant)
    relative = path.relative_to(root)
    index = index_of(variant)
    try:
        probe(index)
    except UserError as exc:
        raise EngineError(
            cause=f"cannot lock {variant.key}: {exc.cause}",
            fix=f"run `python build.py --lock --target {variant.target_name}` on a machine where "
            f"{urlsplit(index).hostname} is reachable and commit {relative}",
        ) from exc
    requirements = root / "images" / variant.key / "requirements.txt"
    argv = compile_argv(find_uv(), requirements, index, variant.base.python)
    body = _compile(argv, ca_bundle, run, f"{requirements.relative_to(root)} on {index}")
    text = format_lock(
        body,
        index_url=index,
        digest=input_digest(requirements_txt(matrix, variant), index),
        command=f"python build.py --lock --target {variant.target_name}",
        requirements=str(requirements.relative_to(root)),
    )
    return _write(path, root, text)


def refresh_locks(
    matrix: Matrix, variants: list[Variant], root: Path, *, ca_bundle: Path | None, probe: IndexProbe
) -> tuple[list[LockChange], list[UserError]]:
    """Lock the installer and each variant; a variant whose index cannot be reached is reported, not fatal."""
    python = variants[0].base.python
    changes = [refresh_tool_lock(root, tool, ca_bundle=ca_bundle, python=python) for tool in TOOL_LOCKS]
    failures: list[UserError] = []
    for variant in (v for v in variants if v.flavour.parent is None):
        try:
            changes.append(refresh_lock(matrix, variant, root, ca_bundle=ca_bundle, probe=probe))
        except UserError as exc:
            failures.append(exc)
    return changes, failures


def refresh_installer_lock(root: Path, *, ca_bundle: Path | None, python: str, run: Runner = _run) -> LockChange:
    """Lock uv itself (the installer the image's build stage fetches from PyPI) at UV_VERSION."""
    return refresh_tool_lock(root, INSTALLER_LOCK, ca_bundle=ca_bundle, python=python, run=run)


def refresh_tool_lock(
    root: Path, relative: Path, *, ca_bundle: Path | None, python: str, run: Runner = _run
) -> LockChange:
    """Lock one build-stage tool of TOOL_LOCKS (uv, cyclonedx-bom) and its dependencies, from PyPI."""
    name, version = TOOL_LOCKS[relative]
    path = root / relative
    if tool_lock_problem(root, relative) is None:
        return LockChange(relative, (), created=False)
    requirement = f"{name}=={version}"
    source = root / "build-output" / f"{relative.stem}.in"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(requirement + "\n", encoding="utf-8")
    body = _compile(compile_argv(find_uv(), source, PYPI_INDEX, python), ca_bundle, run, requirement)
    text = format_lock(
        body,
        index_url=PYPI_INDEX,
        digest=input_digest(requirement + "\n", PYPI_INDEX),
        command="python build.py --lock",
        requirements=requirement,
    )
    return _write(path, root, text)


def tool_lock_problem(root: Path, relative: Path) -> str | None:
    """Why a build-stage tool's lock cannot be used (missing, or another version), or None."""
    name, version = TOOL_LOCKS[relative]
    path = root / relative
    if not path.exists():
        return f"does not exist; it hash-locks {name}=={version} for a build stage"
    found = parse_lock(path.read_text(encoding="utf-8")).versions().get(name)
    return None if found == version else f"locks {name} {found}, but the builder pins {version}"


def _write(path: Path, root: Path, text: str) -> LockChange:
    old = parse_lock(path.read_text(encoding="utf-8")).versions() if path.exists() else {}
    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return LockChange(path.relative_to(root), tuple(diff_versions(old, parse_lock(text).versions())), created)
