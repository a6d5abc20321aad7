"""Every hash lock the project installs from, and the exact versions each pins."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.child_flavour import lock_command, own_lock_path
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.image_folders import images_dir
from pytorch_cuda.matrix.variants import all_variants

# `name==version` at the start of a lock line (uv's export and `uv pip compile` both write them so).
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")


@dataclass(frozen=True)
class LockedPin:
    """One exact pin of one lock (`version` as written; `public` without a local label such as +cu128)."""

    lock: str  # the lock's path, relative to the repository
    name: str  # canonical (PEP 503)
    version: str

    @property
    def public(self) -> str:
        return Version(self.version).public

    @property
    def purl(self) -> str:
        return f"pkg:pypi/{self.name}@{self.version}"


def find_locks(root: Path) -> list[Path]:
    """The images' Python locks (each variant's or flavour's, the installer's, the SBOM tool's; not the layer
    slices, which repeat a variant's lock) and the host tools' exports in requirements/."""
    images = images_dir(root)
    variants = sorted(images.glob("*/requirements*.lock"))
    tools = [p for p in (images / "installer.lock", images / "sbom-tool.lock") if p.exists()]
    return [*variants, *tools, *sorted((root / "requirements").glob("*.txt"))]


def read_pins(path: Path, root: Path) -> list[LockedPin]:
    where = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    if not path.is_file():
        raise UserError(
            cause=f"{where} is not a lock file (it does not exist)",
            fix="name a lock under images/ or requirements/ with --lock, or leave --lock out to audit every lock",
        )
    pins: list[LockedPin] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _PIN.match(line)
        if not match:
            continue
        try:
            Version(match[2])
        except InvalidVersion as exc:
            raise UserError(
                cause=f"{where} line {number} pins {match[1]} to {match[2]!r}, which is not a PEP 440 version",
                fix=f"re-lock it (`build.py lock` for an image's lock, scripts/lock-host-tools.sh for {where})",
            ) from exc
        pins.append(LockedPin(where, canonicalize_name(match[1]), match[2]))
    return pins


def read_all(root: Path, locks: list[Path] | None = None) -> list[LockedPin]:
    found = locks if locks is not None else find_locks(root)
    if not found:
        raise UserError(
            cause=f"no lock was found under {root}/images or {root}/requirements",
            fix="run audit in the repository (or pass --root), after `build.py lock` wrote the locks",
        )
    return [pin for path in found for pin in read_pins(path, root)]


def unlocked(matrix: Matrix, root: Path) -> list[str]:
    """Notes for the matrix's variants that have no lock: nothing of theirs is audited (and `build` refuses
    them), so the audit says so instead of passing over them."""
    missing = [(v, own_lock_path(root, v)) for v in all_variants(matrix)]
    return [
        f"{v.key}: no lock ({path.relative_to(root)}), so not audited; `{lock_command(v)}` on a machine that "
        "reaches its index makes one"
        for v, path in missing
        if not path.exists()
    ]
