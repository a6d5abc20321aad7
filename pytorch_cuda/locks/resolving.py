"""`build.py lock`: resolve each variant's requirements.txt into its hash-locked requirements.lock with uv.

Also locks each child flavour's extras (pytorch_cuda/locks/child_flavour.py), checks a committed lock against
what it was resolved from (`render --check`), and refuses a build whose variant has no lock, naming
the index the lock needs.
"""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.child_flavour import (
    child_lock_problem,
    flavour_lock_path,
    lock_command,
    own_lock_path,
    refresh_child_lock,
)
from pytorch_cuda.locks.file_format import (
    FLAVOUR_LOCK_NAME,
    LAYERS,
    LOCK_NAME,
    PYPI_INDEX,
    TOOL_LOCKS,
    compile_argv,
    format_lock,
    input_digest,
    parse_lock,
)
from pytorch_cuda.locks.forward_only import resolve_forward, start_of, ungated
from pytorch_cuda.locks.writing import (
    IndexProbe,
    LockChange,
    Resolver,
    find_uv,
    index_of,
    lock_path,
    provenance_problem,
    refuse_unreachable,
    require_index,
    write_lock,
)
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.flavours import lineage
from pytorch_cuda.matrix.image_folders import REQUIREMENTS, variant_dir
from pytorch_cuda.matrix.manifest_writer import requirements_txt
from pytorch_cuda.matrix.variants import Variant, all_variants
from pytorch_cuda.stale_file import StaleFile


def lock_problem(matrix: Matrix, variant: Variant, root: Path) -> str | None:
    """Why the committed lock cannot be used as it is (stale or from another index), or None."""
    path = lock_path(root, variant)
    if not path.exists():
        return None
    lock = parse_lock(path.read_text(encoding="utf-8"))
    index = index_of(variant)
    return provenance_problem(lock, index, input_digest(requirements_txt(matrix, variant), index), "requirements.txt")


def stale_locks(matrix: Matrix, variants: list[Variant], root: Path) -> list[StaleFile]:
    """The committed locks that no longer match their inputs or index, or are unsafe (for render --check).

    A child's lock is also reported missing once its parent is locked: the child cannot be built without it."""
    found = [(lock_path(root, v), lock_problem(matrix, v, root), v) for v in variants if v.flavour.parent is None]
    found += [
        (flavour_lock_path(root, v), child_lock_problem(matrix, v, root), v) for v in variants if v.flavour.parent
    ]
    tools = [(tool, tool_lock_problem(root, tool)) for tool in TOOL_LOCKS]
    return [
        StaleFile(path.relative_to(root), f"{why}; run `{_command(v).removeprefix('python ')}`", "")
        for path, why, v in found
        if why
    ] + [StaleFile(tool, f"{why}; run `build.py lock`", "") for tool, why in tools if why]


def _command(variant: Variant) -> str:
    """The command that (re)makes the variant's own lock."""
    child = variant.flavour.parent is not None
    return lock_command(variant) if child else f"python build.py lock --target {variant.target_name}"


def installed_lock(bound: str | None) -> tuple[str, str]:
    """The lock a build step installs from, named for a person, and the command that re-resolves it: a layer slice
    (images/<target>-<flavour>/layer-N-*.lock) is cut from its requirements.lock, a child's flavour lock is its own,
    a tool lock (images/installer.lock) is `build.py lock`'s. The pipeline hands it to the engine's failures."""
    if bound is None:
        return "the lock", "python build.py lock --target TARGET"
    path = Path(bound)
    if path.name in {layer.file for layer in LAYERS}:
        target = path.parent.name.split("-", 1)[0]
        return f"{path.parent / LOCK_NAME} (its layer slice {path.name})", f"python build.py lock --target {target}"
    if path.name == FLAVOUR_LOCK_NAME:
        target, flavour = path.parent.name.split("-", 1)
        return str(path), f"python build.py lock --target {target} --flavour {flavour}"
    return str(path), "python build.py lock"


def require_lock(variant: Variant, root: Path, probe: IndexProbe) -> None:
    """Refuse to build a variant that has no lock; say whether its index can be reached from here.

    A child flavour (jupyter, devel) needs its own requirements-flavour.lock: what it adds to its
    parent's locked venv, hash-locked against the parent's pins."""
    child = variant.flavour.parent is not None
    path = flavour_lock_path(root, variant) if child else lock_path(root, variant)
    if path.exists():
        return
    relative = path.relative_to(root)
    refuse_unreachable(
        variant,
        probe,
        cause=f"{relative} does not exist, and it cannot be made here",
        command=_command(variant),
        then=f", commit {relative}, then build",
    )
    raise UserError(
        cause=f"{relative} does not exist; a build installs only hash-locked packages",
        fix=f"run `{_command(variant)}` and commit {relative}, then build",
    )


def refresh_lock(
    matrix: Matrix, variant: Variant, root: Path, resolver: Resolver, *, upgrade: bool = False
) -> LockChange:
    """Resolve the variant's requirements.txt on its one index and write its lock; say what changed. Forward only
    (pytorch_cuda/locks/forward_only.py): the committed versions are uv's preferences unless `upgrade`, and no
    transitive pin goes below them either way."""
    path = lock_path(root, variant)
    relative = path.relative_to(root)
    index = index_of(variant)
    require_index(variant, relative, resolver.probe)
    requirements = variant_dir(root, variant) / REQUIREMENTS
    text = requirements_txt(matrix, variant)
    argv = compile_argv(find_uv(), root, requirements, index, variant.base.python)
    start = start_of(path, index, text, keep=not upgrade)
    scratch = root / "build-output" / f"{variant.key}-lock"
    what = f"{requirements.relative_to(root)} on {index}"
    found = resolve_forward(resolver, argv, what, index=index, start=start, scratch=scratch)
    lock = format_lock(
        found.body,
        index_url=index,
        digest=input_digest(text, index),
        command=f"python build.py lock --target {variant.target_name}",
        requirements=str(requirements.relative_to(root)),
    )
    return write_lock(path, root, lock, found.held)


def refresh_locks(
    matrix: Matrix,
    variants: list[Variant],
    root: Path,
    resolver: Resolver,
    *,
    upgrade: bool = False,
    upgrade_tools: bool = False,
) -> tuple[list[LockChange], list[UserError]]:
    """Lock the build-stage tools, each root variant, then the children (of those roots, or asked for by name).

    Keep (the default: `lock`, `bump`, `audit --fix`): a lock whose inputs are unchanged is left as it is, so a pin
    moves only the locks that hold it; a stale one keeps what the new pins do not need to move. `upgrade` (lock
    maintenance): every lock of `variants` resolved afresh, and the tools' with `upgrade_tools`. Never a transitive
    pin back (forward_only).
    A variant whose index cannot be reached is reported, not fatal; its children are left as they are.
    The tool locks are resolved from PyPI with the resolver's CA bundle (and its gate when upgrading)."""
    python = variants[0].base.python
    changes = [refresh_tool_lock(root, tool, resolver, python=python, upgrade=upgrade_tools) for tool in TOOL_LOCKS]
    failures: list[UserError] = []
    asked = {v.key for v in variants}
    failed: set[str] = set()
    for variant in (v for v in variants if v.flavour.parent is None):
        path = lock_path(root, variant)
        if not upgrade and path.exists() and lock_problem(matrix, variant, root) is None:
            changes.append(LockChange(path.relative_to(root), (), created=False))  # its inputs are as locked
            continue
        try:
            changes.append(refresh_lock(matrix, variant, root, resolver, upgrade=upgrade))
        except UserError as exc:
            failures.append(exc)
            failed.add(variant.key)
    children = sorted(
        (v for v in all_variants(matrix) if v.flavour.parent is not None),
        key=lambda v: len(lineage(matrix, v)),
    )
    for child in children:
        chain = {v.key for v in lineage(matrix, child)}
        if not chain & asked or chain & failed:
            continue
        path = flavour_lock_path(root, child)
        if not upgrade and path.exists() and child_lock_problem(matrix, child, root) is None:
            changes.append(LockChange(path.relative_to(root), (), created=False))
            continue
        try:
            changes.append(refresh_child_lock(matrix, child, root, resolver, upgrade=upgrade))
        except UserError as exc:
            failures.append(exc)
            failed.add(child.key)
    return changes, failures


def refresh_tool_lock(
    root: Path, relative: Path, resolver: Resolver, *, python: str, upgrade: bool = False
) -> LockChange:
    """Lock one build-stage tool of TOOL_LOCKS (uv, cyclonedx-bom) and its dependencies, from PyPI: when its lock
    is missing or pins another version of the tool, or always with `upgrade` (lock maintenance: its dependencies
    forward within the release-age gate; the tool's own pin is the builder's, and the gate does not hold it)."""
    name, version = TOOL_LOCKS[relative]
    path = root / relative
    if not upgrade and tool_lock_problem(root, relative) is None:
        return LockChange(relative, (), created=False)
    requirement = f"{name}=={version}"
    source = root / "build-output" / f"{relative.stem}.in"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(requirement + "\n", encoding="utf-8")
    argv = compile_argv(find_uv(), root, source, PYPI_INDEX, python)
    if resolver.cutoff(PYPI_INDEX) is not None:
        argv += ungated([name])
    start = start_of(path, PYPI_INDEX, requirement, keep=not upgrade)
    scratch = root / "build-output" / f"{relative.stem}-lock"
    found = resolve_forward(resolver, argv, requirement, index=PYPI_INDEX, start=start, scratch=scratch)
    text = format_lock(
        found.body,
        index_url=PYPI_INDEX,
        digest=input_digest(requirement + "\n", PYPI_INDEX),
        command="python build.py lock",
        requirements=requirement,
    )
    return write_lock(path, root, text, found.held)


def tool_lock_problem(root: Path, relative: Path) -> str | None:
    """Why a build-stage tool's lock cannot be used (missing, or another version), or None."""
    name, version = TOOL_LOCKS[relative]
    path = root / relative
    if not path.exists():
        return f"does not exist; it hash-locks {name}=={version} for a build stage"
    found = parse_lock(path.read_text(encoding="utf-8")).versions().get(name)
    return None if found == version else f"locks {name} {found}, but the builder pins {version}"


def not_locked(root: Path, variants: list[Variant], stale: list[StaleFile]) -> list[str]:
    """The variants' own locks (relative to root) that do not exist yet and are not among ``stale`` already: a
    child's lock is made once its parent's is; until then neither can be built."""
    missing = [str(path.relative_to(root)) for path in (own_lock_path(root, v) for v in variants) if not path.exists()]
    reported = {str(s.path) for s in stale}
    return [path for path in missing if path not in reported]
