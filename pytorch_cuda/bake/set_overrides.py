"""The overrides `build`, `push` and `bake` take beside the matrix, in docker buildx's words: `--set PATTERN.KEY=VALUE`
(bake's overrides, with buildx bake's rules: PATTERN is a bake target name or a glob over them, never a group or an
alias; a value is kept whole, commas and all; a repeated --set on a list appends; a pattern that matches no target
is an error; a boolean is one that Go's strconv.ParseBool reads; `args.NAME` with no value is taken from the
environment) and `--platform` (linux/amd64 only, and why). The project's own labels are not --set keys."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping, Sequence
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
LIST_KEYS = ("tags", "cache-from", "cache-to", "output", "secrets", "attest")  # --set appends, += too
MAP_KEYS = ("args.", "labels.", "contexts.")
TEXT_KEYS = ("context", "dockerfile", "target", "shm-size")
BOOL_KEYS = ("no-cache", "pull", "push")
BAKE_KEYS = (*MAP_KEYS, *TEXT_KEYS, *BOOL_KEYS, "platform", *LIST_KEYS)  # the keys buildx 0.13.1 applies and prints
ATTRIBUTES = {"secrets": "secret", "platform": "platforms"}  # a --set key -> its bake file attribute
PROJECT_LABELS = ("org.opencontainers.image.", f"{LABEL_PREFIX}.")  # what the image says about itself
NETWORK = "network"  # buildx 0.29.1 takes it, 0.13.1 does not; refused here on purpose (docs/cli.md)
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
    """What a --set pattern is matched against: the bake target names (one per variant of the matrix), as
    buildx matches them; the aliases and groups only to say what to write instead."""

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

    def matches(self, variant: str) -> bool:
        """buildx's expandTargets: the bake target of that name, else every one the glob matches."""
        return self.pattern == variant or fnmatch.fnmatchcase(variant, self.pattern)


def parse_overrides(
    values: Sequence[str], allowed: Sequence[str], scope: Scope, environ: Mapping[str, str] | None = None
) -> list[Override]:
    """The --set values, each checked: its form, its key, a boolean's value, a label that is the project's own,
    and that its pattern matches some bake target (buildx: could not find any target matching). `args.NAME`
    with no `=VALUE` takes $NAME, and is left out when $NAME is unset, as buildx does."""
    found: list[Override] = []
    for value in values:
        override = _parse(value, allowed, os.environ if environ is None else environ)
        pattern = override.pattern if override else value.partition(".")[0]
        if not any(fnmatch.fnmatchcase(variant, pattern) or variant == pattern for variant, _ in scope.variants):
            raise _no_target(value, pattern, scope)
        if override:
            found.append(override)
    return found


def _no_target(value: str, pattern: str, scope: Scope) -> UserError:
    keys = [variant for variant, _ in scope.variants]
    target = scope.names.get(pattern, pattern)
    if target in scope.groups or target in {t for _, t in scope.variants}:
        members = scope.groups.get(target, [target])
        glob = f"{members[0]}-*" if len(members) == 1 else "*"
        kind = "group" if target in scope.groups else "target" if target == pattern else f"alias of {target}"
        return UserError(
            cause=f"--set {value!r}: could not find any target matching {pattern!r}; {pattern!r} is a matrix "
            f"{kind}, and buildx bake matches a --set pattern against bake target names only (one per variant: "
            f"{', '.join(keys)}), never against a group or an alias",
            fix=f"name the variants with a glob instead, e.g. --set '{glob}.{value.partition('.')[2]}' (quoted, "
            "so the shell leaves the * to bake)",
        )
    return UserError(
        cause=f"--set {value!r}: could not find any target matching {pattern!r}{did_you_mean(pattern, keys)}",
        fix=f"use a bake target (a variant) or a glob over them (e.g. '*' or 'cu128-*'): {', '.join(keys)}",
    )


def _parse(value: str, allowed: Sequence[str], environ: Mapping[str, str]) -> Override | None:
    left, equals, right = value.partition("=")
    append = left.endswith("+")
    pattern, dot, key = left.removesuffix("+").partition(".")
    from_env = not equals and key.startswith("args.") and len(key) > len("args.")
    if (not equals and not from_env) or not dot or not pattern or not key:
        raise UserError(
            cause=f"--set {value!r} is not PATTERN.KEY=VALUE (buildx: expected target.name=value; only "
            "args.NAME may leave out =VALUE, to take $NAME)",
            fix="write it as bake does, e.g. --set cu128-runtime.labels.org.example.team=ml or --set '*.no-cache=true'",
        )
    if key == NETWORK and NETWORK not in allowed:
        raise UserError(
            cause=f"--set {value!r}: the network is not a --set key here. The images' RUN steps fetch their "
            "Debian packages and hash-locked wheels through the builder's default network (none would fail them, "
            "host needs an entitlement), and buildx's own `--set network=VALUE` has no answer to match: 0.13.1 "
            "refuses the key and 0.29.1 prints an empty network whatever VALUE says",
            fix="leave it out; a builder's network is the builder's own setting (docker buildx create "
            "--driver-opt network=NAME)",
        )
    if not any(key == a or (a.endswith(".") and key.startswith(a) and len(key) > len(a)) for a in allowed):
        bare = key.rstrip(".")
        needs_name = f"{bare}." in allowed
        raise UserError(
            cause=f"--set {value!r}: "
            + (f"{bare} requires a name ({bare}.NAME)" if needs_name else f"{key!r} is not a key this command ")
            + ("" if needs_name else f"overrides{did_you_mean(key, [a.rstrip('.') for a in allowed])}"),
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
    if from_env:
        name = key.removeprefix("args.")
        return Override(pattern, key, environ[name]) if name in environ else None
    override = Override(pattern, key, right, append)
    if key in BOOL_KEYS:
        is_flag(override)
    elif key == "platform":
        for platform in right.split(","):
            check_platform(platform)
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


def apply_to_plan(plan: BuildPlan, overrides: Sequence[Override]) -> BuildPlan:
    """The plan with the overrides that match its variant (labels, no-cache). As in buildx, the --no-cache flag
    beats a --set: it is bake's `*.no-cache=true` given after every --set."""
    labels, no_cache = dict(plan.labels), False
    for override in (o for o in overrides if o.matches(plan.variant.key)):
        if override.key == "no-cache":
            no_cache = is_flag(override)
        else:
            labels[override.key.removeprefix("labels.")] = override.value
    return replace(plan, labels=labels, no_cache=plan.no_cache or no_cache)
