"""`build.py lock` for a child flavour (jupyter, devel): images/<child>/requirements-flavour.lock.

A child installs its extras on top of its parent's venv. uv resolves them on the parent's one index
with the parent's whole lock as constraints, so torch, numpy and every shared package stay exactly
at the parent's versions; the lock keeps only the packages the parent lacks, each at == with its
hashes, and the child installs it with --require-hashes --no-deps --no-build. Its input digest
covers requirements-flavour.txt and the parent's lock, so a relocked parent makes it stale.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda.locks.file_format import FLAVOUR_LOCK_NAME, compile_argv, format_lock, input_digest, parse_lock
from pytorch_cuda.locks.forward_only import resolve_forward, start_of
from pytorch_cuda.locks.writing import (
    LockChange,
    Resolver,
    find_uv,
    index_of,
    lock_path,
    provenance_problem,
    require_index,
    write_lock,
)
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.flavours import flavour_requirements_txt, lineage
from pytorch_cuda.matrix.image_folders import FLAVOUR_REQUIREMENTS, variant_dir
from pytorch_cuda.matrix.variants import Variant

_PINNED_OR_OPTION = re.compile(r"^(#|--|\s|$|[A-Za-z0-9][A-Za-z0-9._-]*==\S+)")


def flavour_lock_path(root: Path, variant: Variant) -> Path:
    return variant_dir(root, variant) / FLAVOUR_LOCK_NAME


def own_lock_path(root: Path, variant: Variant) -> Path:
    """The lock `build.py lock` makes for this variant itself: a root's requirements.lock, a child's
    requirements-flavour.lock."""
    return lock_path(root, variant) if variant.flavour.parent is None else flavour_lock_path(root, variant)


def lock_command(variant: Variant) -> str:
    return f"python build.py lock --target {variant.target_name} --flavour {variant.flavour_name}"


def ancestor_locks(matrix: Matrix, variant: Variant, root: Path) -> list[Path]:
    """The locks of what the child is built FROM, root first: the root's lock, then any parent child's."""
    chain = lineage(matrix, variant)[:-1]
    return [own_lock_path(root, v) for v in chain]


def inherited_versions(paths: list[Path]) -> dict[str, str]:
    """What the parent's venv already holds: name -> version, from its locks."""
    versions: dict[str, str] = {}
    for path in paths:
        versions.update(parse_lock(path.read_text(encoding="utf-8")).versions())
    return versions


def child_input_digest(matrix: Matrix, variant: Variant, root: Path) -> str:
    """The requirements-flavour.txt the matrix renders, and the bytes of every ancestor lock."""
    constraints = "".join(
        f"# constraints: {path.relative_to(root)} sha256:{hashlib.sha256(path.read_bytes()).hexdigest()}\n"
        for path in ancestor_locks(matrix, variant, root)
    )
    return input_digest(flavour_requirements_txt(variant) + constraints, index_of(variant))


def lock_defects(text: str, inherited: dict[str, str]) -> list[str]:
    """What makes a child lock unsafe to install with --no-deps on top of its parent (empty: nothing)."""
    lock = parse_lock(text)
    problems = [f"{line.split()[0]!r} is not pinned with ==" for line in text.splitlines()
                if not _PINNED_OR_OPTION.match(line)]  # fmt: skip
    unhashed = [entry.name for entry in lock.entries if "--hash=sha256:" not in entry.text]
    if unhashed:
        problems.append(f"{', '.join(unhashed)} without a --hash")
    for entry in lock.entries:
        before = inherited.get(entry.name)
        if before is not None and before != entry.version:
            problems.append(f"changes the parent's pin {entry.name} {before} -> {entry.version}")
        elif before is not None:
            problems.append(f"repeats the parent's pin {entry.name}=={before} (the child adds only what it lacks)")
    return problems


def child_lock_problem(matrix: Matrix, variant: Variant, root: Path) -> str | None:
    """Why the child's committed lock cannot be used (missing, stale, unsafe), or None.

    None too while an ancestor has no lock: the lineage cannot be built then, and says so itself."""
    ancestors = ancestor_locks(matrix, variant, root)
    if variant.flavour.parent is None or not all(path.exists() for path in ancestors):
        return None
    path = flavour_lock_path(root, variant)
    if not path.exists():
        return "does not exist; a build installs only hash-locked packages"
    text = path.read_text(encoding="utf-8")
    lock = parse_lock(text)
    digest = child_input_digest(matrix, variant, root)
    inputs = "requirements-flavour.txt or the parent's lock"
    problem = provenance_problem(lock, index_of(variant), digest, inputs)
    if problem is not None:
        return problem
    return "; ".join(lock_defects(text, inherited_versions(ancestors))) or None


def refresh_child_lock(
    matrix: Matrix, variant: Variant, root: Path, resolver: Resolver, *, upgrade: bool = False
) -> LockChange:
    """Resolve the child's extras against its parent's lock and write what the parent lacks; say what changed.
    Forward only, as a root's lock (pytorch_cuda/locks/forward_only.py)."""
    path = flavour_lock_path(root, variant)
    relative = path.relative_to(root)
    ancestors = ancestor_locks(matrix, variant, root)
    missing = [p.relative_to(root) for p in ancestors if not p.exists()]
    if missing:
        raise UserError(
            cause=f"cannot lock {variant.key}: its parent's lock {missing[0]} does not exist",
            fix=f"lock the parent first (`python build.py lock --target {variant.target_name}`), then the child",
        )
    index = index_of(variant)
    require_index(variant, relative, resolver.probe)
    inherited = inherited_versions(ancestors)
    constraints = root / "build-output" / f"{variant.key}-constraints.txt"
    constraints.parent.mkdir(parents=True, exist_ok=True)
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in inherited.items()), encoding="utf-8")
    requirements = variant_dir(root, variant) / FLAVOUR_REQUIREMENTS
    argv = compile_argv(find_uv(), root, requirements, index, variant.base.python)
    argv += ["--constraint", str(constraints.absolute()), "--no-build"]
    start = start_of(path, index, flavour_requirements_txt(variant), keep=not upgrade)
    what = f"{requirements.relative_to(root)} on {index}"
    scratch = root / "build-output" / f"{variant.key}-lock"
    found = resolve_forward(resolver, argv, what, index=index, start=start, scratch=scratch)
    resolved = parse_lock(found.body).entries
    moved = [
        f"{e.name} {inherited[e.name]} -> {e.version}"
        for e in resolved
        if inherited.get(e.name, e.version) != e.version
    ]
    if moved:
        raise EngineError(
            cause=f"uv moved the parent's pins while resolving {variant.key} ({', '.join(moved)})",
            fix="report it: the parent's lock is passed to uv as constraints, so this should not happen",
        )
    text = format_lock(
        "".join(entry.text + "\n" for entry in resolved if entry.name not in inherited),
        index_url=index,
        digest=child_input_digest(matrix, variant, root),
        command=lock_command(variant),
        requirements=f"{requirements.relative_to(root)}, with {', '.join(str(p.relative_to(root)) for p in ancestors)} "
        "as constraints (only what the parent lacks)",
    )
    return write_lock(path, root, text, found.held)
