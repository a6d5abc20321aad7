"""Step 3b of verify: the provenance's resolvedDependencies against the checkout verify runs from. The image must
have been built on the base this checkout pins (matrix.yaml's `digest:` and published `upstream:`) and from
exactly the lock files this checkout commits for the variant the provenance names (build_inputs.py): an image
built from an edited, older or newer lock, or on another base, is refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytorch_cuda.errors import UserError
from pytorch_cuda.release.build_inputs import BuildInputs, PinnedBase, UnknownVariantError, committed_inputs
from pytorch_cuda.release.failures import Reason

FIELD = "provenance resolvedDependencies"


class UncheckableBaseError(UserError):
    """This checkout pins no published base, so the base of a release cannot be checked. Exit status 2."""


def inputs_fix() -> str:
    """Never a checkout the artifact names: the signer would pick the checkout that judges its image."""
    return (
        "do not use this image: it was not built from the inputs this checkout commits. Verify with a checkout "
        "you chose yourself (the release tag's commit from the project's own git history, e.g. `git checkout "
        "v2.9.1` after `git fetch --tags` and `git tag -v`), never with a commit the image's provenance names"
    )


def _sha256(dependency: Mapping[str, Any]) -> str:
    return "sha256:" + str((dependency.get("digest") or {}).get("sha256", ""))


def recorded_locks(dependencies: Sequence[Mapping[str, Any]], source_repository: str) -> dict[str, str]:
    """The lock files the provenance records: `git+SOURCE@COMMIT#PATH` -> PATH: sha256:HEX."""
    found: dict[str, str] = {}
    for dependency in dependencies:
        uri = str(dependency.get("uri", ""))
        if uri.startswith(f"git+{source_repository}@") and "#" in uri:
            found[uri.partition("#")[2]] = _sha256(dependency)
    return found


def _pinned(expected: BuildInputs) -> PinnedBase:
    if expected.base is None:
        raise UncheckableBaseError(
            cause=f"this checkout's matrix.yaml pins no published base for {expected.base_name!r} (`digest:` and "
            "`upstream: REPO@sha256:...`), so verify cannot check the base a release was built on",
            fix="verify from a checkout of the released commit (release.yml signs only with a pinned base), or pin "
            "the base (`build.py release pin-base`) and commit matrix.yaml",
        )
    return expected.base


def _base_reason(base: PinnedBase, dependencies: Sequence[Mapping[str, Any]]) -> Reason | None:
    images = [(str(d.get("uri")), _sha256(d)) for d in dependencies if str(d.get("uri", "")).startswith("docker://")]
    if (base.uri, base.config) in images:
        return None
    found = ", ".join(f"{uri} ({digest})" for uri, digest in images) or "none"
    why = ("built on another base than this checkout pins" if images else
           "the provenance records no base: signed without the pinned-base check")  # fmt: skip
    return Reason(f"{FIELD} base", f"{base.uri} ({base.config}), matrix.yaml's pinned base {base.name!r}", found, why)


def _lock_reason(expected: BuildInputs, recorded: Mapping[str, str]) -> Reason | None:
    for path, want in expected.locks.items():
        got = recorded.get(path)
        if got == want:
            continue
        if want is None:
            return Reason(f"{FIELD} {path}", "a lock committed in this checkout", got or "none",
                          f"{expected.variant} is not locked in this checkout")  # fmt: skip
        why = ("the provenance does not record this lock" if got is None else
               "built from another lock than this checkout commits (an edited, older or newer lock)")  # fmt: skip
        return Reason(f"{FIELD} {path}", f"{want} (this checkout's)", got or "none", why)
    for path, got in sorted(recorded.items()):
        if path not in expected.locks:
            expected_text = f"no such lock (this checkout's {expected.variant} Dockerfiles read none)"
            return Reason(f"{FIELD} {path}", expected_text, got, "built from other Dockerfiles than this checkout's")
    return None


class InputMismatchError(Exception):
    """The provenance's base or locks are not the checkout's: `reason` names the first difference."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.field)
        self.reason = reason


def checked_inputs(
    root: Path, variant: str, dependencies: Sequence[Mapping[str, Any]], source_repository: str
) -> tuple[BuildInputs, PinnedBase]:
    """What the checkout at `root` commits for `variant`, once the provenance's base and locks are found to be
    exactly that; else InputMismatchError naming the first difference."""
    try:
        expected = committed_inputs(root, variant)
    except UnknownVariantError as exc:
        reason = Reason("provenance externalParameters.variant", f"a variant of {root / 'matrix.yaml'}", variant,
                        "built from another matrix than this checkout's")  # fmt: skip
        raise InputMismatchError(reason) from exc
    base = _pinned(expected)
    differs = _base_reason(base, dependencies) or _lock_reason(
        expected, recorded_locks(dependencies, source_repository)
    )
    if differs is not None:
        raise InputMismatchError(differs)
    return expected, base
