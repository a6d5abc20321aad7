"""The overrides `build`, `push` and `bake` take beside the matrix, in docker buildx's words: `--set PATTERN.KEY=VALUE`
(bake's overrides, with bake's rules: a value is kept whole, commas and all; a repeated --set on a list appends;
a pattern that matches no target is an error; a boolean is one that Go's strconv.ParseBool reads) and
`--platform` (linux/amd64 only, and why). The project's own labels are not --set keys."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from pytorch_cuda.errors import UserError
from pytorch_cuda.image_build.build_plan import BuildPlan
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.labels import LABEL_PREFIX
from pytorch_cuda.matrix.target_selection import did_you_mean, group_members
from pytorch_cuda.matrix.variants import all_variants

PLATFORM = "linux/amd64"
_PLATFORM_ALIASES = {"linux/amd64", "linux/x86_64", "linux/amd64/v1", "amd64", "x86_64"}
BUILD_KEYS = ("labels.", "no-cache")  # what `build`/`push` apply; `bake` takes bake's own keys too
LIST_KEYS = ("tags", "cache-from", "cache-to", "output")  # bake's list attributes: --set appends, += too
BAKE_KEYS = ("labels.", "no-cache", "args.", "platform", "pull", *LIST_KEYS)
PROJECT_LABELS = ("org.opencontainers.image.", f"{LABEL_PREFIX}.")  # what the image says about itself
_TRUE, _FALSE = {"1", "t", "T", "TRUE", "true", "True"}, {"0", "f", "F", "FALSE", "false", "False"}


def check_platform(platform: str) -> str:
    """linux/amd64, or one paragraph saying why nothing else (exit 2)."""
    if platform.strip().lower() in _PLATFORM_ALIASES:
        return PLATFORM
    raise UserError(
        cause=f"--platform {platform} is not built: every lock is resolved for manylinux_2_28 x86_64 (uv "
        "--python-platform x86_64-manylinux_2_28), and the CUDA wheels the images install (nvidia-*, torch's "
        "+cuXXX builds on their indexes) are x86_64 builds pinned by hash, so an arm64 image would have no lock "
        "to install from",
        fix=f"leave --platform out (or pass {PLATFORM}); an arm64 image needs its own target with aarch64 locks",
    )


@dataclass(frozen=True)
class Scope:
    """What a --set pattern is matched against: every variant of the matrix (bake's file), and the names that
    stand for targets (aliases) or for several (groups)."""

    variants: tuple[tuple[str, str], ...]  # (variant key, target name)
    names: dict[str, str] = field(default_factory=dict)  # alias -> target
    groups: dict[str, list[str]] = field(default_factory=dict)  # group -> targets


def scope_of(matrix: Matrix) -> Scope:
    variants = tuple((v.key, v.target_name) for v in all_variants(matrix))
    return Scope(variants, matrix.target_names(), group_members(matrix))


@dataclass(frozen=True)
class Override:
    pattern: str
    key: str
    value: str
    append: bool = False  # KEY+=VALUE: add to the file's list instead of replacing it

    @property
    def text(self) -> str:
        return f"{self.pattern}.{self.key}{'+=' if self.append else '='}{self.value}"

    def matches(self, variant: str, target: str, scope: Scope) -> bool:
        if self.pattern in scope.groups:
            return target in scope.groups[self.pattern]
        canonical = scope.names.get(self.pattern, self.pattern)  # an alias (cu12) names its target (cu128)
        return any(fnmatch.fnmatchcase(name, canonical) for name in (variant, target))


def parse_overrides(values: Sequence[str], allowed: Sequence[str], scope: Scope) -> list[Override]:
    """The --set values, each checked: its form, its key, a boolean's value, a label that is the project's own,
    and that its pattern matches some target (buildx: could not find any target matching)."""
    found = [_parse(value, allowed) for value in values]
    for override in found:
        if not any(override.matches(variant, target, scope) for variant, target in scope.variants):
            accepted = [*(v for v, _ in scope.variants), *scope.names.values(), *scope.names, *scope.groups]
            raise UserError(
                cause=f"--set {override.text!r}: could not find any target matching {override.pattern!r}"
                f"{did_you_mean(override.pattern, accepted)}",
                fix=f"use a variant, target, alias or group from `python build.py list` (or a glob such as "
                f"'*' or 'cu12*'): {', '.join(sorted(set(accepted)))}",
            )
    return found


def _parse(value: str, allowed: Sequence[str]) -> Override:
    left, equals, right = value.partition("=")
    append = left.endswith("+")
    pattern, dot, key = left.removesuffix("+").partition(".")
    if not equals or not dot or not pattern or not key:
        raise UserError(
            cause=f"--set {value!r} is not PATTERN.KEY=VALUE",
            fix="write it as bake does, e.g. --set cu12.labels.org.example.team=ml or --set '*.no-cache=true'",
        )
    if not any(key == a or (a.endswith(".") and key.startswith(a) and len(key) > len(a)) for a in allowed):
        raise UserError(
            cause=f"--set {value!r}: {key!r} is not a key this command overrides"
            f"{did_you_mean(key, [a.rstrip('.') for a in allowed])}",
            fix=f"use one of {', '.join(a + 'NAME' if a.endswith('.') else a for a in allowed)}",
        )
    if append and key not in LIST_KEYS:
        raise UserError(
            cause=f"--set {value!r}: += appends to a list, and {key!r} is not one",
            fix=f"write {pattern}.{key}={right} (+= takes {', '.join(LIST_KEYS)})",
        )
    label = key.removeprefix("labels.") if key.startswith("labels.") else ""
    if label.startswith(PROJECT_LABELS):
        raise UserError(
            cause=f"--set {value!r}: the label {label} is the project's own (org.opencontainers.image.* and "
            f"{LABEL_PREFIX}.* say what the image is, its revision and pins, and a verifier reads them)",
            fix="set a label of your own namespace instead, e.g. --set '*.labels.org.example.team=ml'",
        )
    override = Override(pattern, key, right, append)
    if key in ("no-cache", "pull"):
        is_flag(override)
    return override


def is_flag(override: Override) -> bool:
    """A boolean --set value, read as bake reads it (Go's strconv.ParseBool); anything else is refused, as
    bake refuses it (pull=maybe included: bake's pull is true or false)."""
    if override.value in _TRUE:
        return True
    if override.value in _FALSE:
        return False
    raise UserError(
        cause=f"--set {override.text!r}: invalid value {override.value} for boolean key {override.key} (bake "
        "reads 1, t, true, TRUE, True or 0, f, false, FALSE, False)",
        fix=f"write --set {override.pattern}.{override.key}=true or =false",
    )


def apply_to_plan(plan: BuildPlan, overrides: Sequence[Override], scope: Scope) -> BuildPlan:
    """The plan with the overrides that match its variant (labels, no-cache)."""
    labels, no_cache = dict(plan.labels), plan.no_cache
    for override in overrides:
        if not override.matches(plan.variant.key, plan.variant.target_name, scope):
            continue
        if override.key == "no-cache":
            no_cache = is_flag(override)
        else:
            labels[override.key.removeprefix("labels.")] = override.value
    return replace(plan, labels=labels, no_cache=no_cache)
