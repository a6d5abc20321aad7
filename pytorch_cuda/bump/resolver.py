"""The newest version of one package that the policy allows and the image can install.

A version counts when at least one of its files is a wheel for the image's Python and platform
(cp313, manylinux_2_28 x86_64, as the locks resolve), not yanked (PEP 592) and whose Requires-Python
admits the image's Python. Newer installable versions the rule does not admit are "held back by policy".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from pytorch_cuda.bump.bump_policy import Rule
from pytorch_cuda.package_index.simple_index import IndexFile

# manylinux_2_28 x86_64 (locks/file_format.PYTHON_PLATFORM) and every older glibc it runs wheels of.
PLATFORMS = (
    *(f"manylinux_2_{minor}_x86_64" for minor in range(28, 4, -1)),
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
)


@dataclass(frozen=True)
class Resolution:
    name: str
    old: str
    new: str  # == old when nothing moves
    why: str  # why `new` is allowed (the rule), or why nothing moved
    held_back: str | None  # the newest installable version the policy does not admit
    yanked: tuple[str, ...]  # newer versions skipped because every file of theirs is yanked
    too_new: tuple[str, ...] = ()  # newer versions younger than the policy's min_release_age (not yet admitted)
    rule: str = ""  # the policy's rule for this pin, and what it admits (the dashboard's "held back by")

    @property
    def moved(self) -> bool:
        return self.new != self.old


@cache
def supported_tags(python: str) -> frozenset[Tag]:
    version = tuple(int(part) for part in python.split(".")[:2])
    interpreter = f"cp{version[0]}{version[1]}"
    return frozenset(
        [
            *cpython_tags(version, abis=[interpreter], platforms=PLATFORMS),
            *compatible_tags(version, interpreter=interpreter, platforms=PLATFORMS),
        ]
    )


def _wheel_version(file: IndexFile, python: str) -> Version | None:
    """The version of a wheel this image can install (any tag of it supported), else None."""
    try:
        _, version, _, tags = parse_wheel_filename(file.filename)
    except InvalidWheelFilename:
        return None  # an sdist: the images install wheels only
    return version if tags & supported_tags(python) else None


def _python_ok(file: IndexFile, python: str) -> bool:
    if not file.requires_python:
        return True
    try:
        return SpecifierSet(file.requires_python).contains(Version(python), prereleases=True)
    except ValueError:
        return False  # an unreadable Requires-Python: installers skip the file, and so do we


def _public(version: Version, local: str | None) -> Version | None:
    """The version as the matrix writes it: with `local` (cu126 index), only that local label counts."""
    if version.local != local:
        return None
    return Version(version.public)


def versions(files: Iterable[IndexFile], python: str, local: str | None = None) -> tuple[set[Version], set[Version]]:
    """(installable versions, versions whose installable wheels are all yanked)."""
    usable: set[Version] = set()
    yanked: set[Version] = set()
    for file in files:
        found = _wheel_version(file, python)
        version = _public(found, local) if found is not None else None
        if version is None or not _python_ok(file, python):
            continue
        (yanked if file.yanked else usable).add(version)
    return usable, yanked - usable


def resolve(
    name: str, current: str, rule: Rule, files: Iterable[IndexFile], *, python: str, local: str | None = None
) -> Resolution:
    """The newest installable version `rule` admits (never older than `current`), and what it holds back."""
    old = Version(current)
    usable, yanked = versions(files, python, local)
    prereleases = old.is_prerelease
    newer = sorted(v for v in usable if v > old and (prereleases or not v.is_prerelease))
    allowed = rule.allowed(old)
    admitted = [v for v in newer if allowed.contains(v, prereleases=prereleases)]
    new = admitted[-1] if admitted else old
    held = [v for v in newer if v > new and v not in admitted]
    if admitted:
        why = rule.why(old)
    elif not usable:
        why = "not on this index for this Python and platform"
    else:
        why = "newest allowed" if old in usable or not newer else "no newer allowed version"
    return Resolution(
        name=name,
        old=current,
        new=current if new == old else str(new),
        why=why,
        held_back=str(held[-1]) if held else None,
        yanked=tuple(str(v) for v in sorted(yanked) if v > old),
        rule=rule.why(old),
    )
