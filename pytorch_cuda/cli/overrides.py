"""What `build`, `push` and `bake` take beside the matrix, in docker buildx's words: `--set PATTERN.KEY=VALUE`
(bake's overrides), `--platform` (linux/amd64 only, and why) and `--metadata-file` (buildx's JSON of what was
built: containerimage.digest, image.name, ...)."""

from __future__ import annotations

import argparse
import fnmatch
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytorch_cuda.build.build_plan import BuildPlan
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.target_selection import did_you_mean

PLATFORM = "linux/amd64"
_PLATFORM_ALIASES = {"linux/amd64", "linux/x86_64", "linux/amd64/v1", "amd64", "x86_64"}
BUILD_KEYS = ("labels.", "no-cache")  # what `build`/`push` apply; `bake` takes bake's own keys too
BAKE_KEYS = ("labels.", "no-cache", "args.", "tags", "platform", "cache-from", "cache-to", "output", "pull")


def options(parser: argparse.ArgumentParser, *, metadata: bool = True) -> None:
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATTERN.KEY=VALUE",
        help="override for the variants PATTERN matches (a variant, a target or alias, or a glob: *, cu12*), as "
        "bake's --set: labels.NAME=V, no-cache=true (bake also: args.NAME=V, tags=REF, cache-from, cache-to, "
        "output, pull)",
    )
    parser.add_argument(
        "--platform",
        default=PLATFORM,
        metavar="OS/ARCH",
        help=f"the image's platform; only {PLATFORM}: the locks resolve manylinux_2_28 x86_64 wheels",
    )
    if metadata:
        parser.add_argument(
            "--metadata-file",
            type=Path,
            metavar="PATH",
            help="write what was built as JSON, buildx's keys (containerimage.digest, containerimage.config.digest, "
            "image.name); several targets: keyed by target, as bake writes it",
        )


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
class Override:
    pattern: str
    key: str
    value: str

    def matches(self, variant: str, target: str, names: dict[str, str]) -> bool:
        canonical = names.get(self.pattern, self.pattern)  # an alias (cu12) names its target (cu128)
        return any(fnmatch.fnmatchcase(name, canonical) for name in (variant, target))


def parse_overrides(values: Sequence[str], allowed: Sequence[str]) -> list[Override]:
    found = []
    for value in values:
        left, equals, right = value.partition("=")
        pattern, dot, key = left.partition(".")
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
        found.append(Override(pattern, key, right))
    return found


def _flag(override: Override) -> bool:
    if override.value.lower() in {"true", "1"}:
        return True
    if override.value.lower() in {"false", "0"}:
        return False
    raise UserError(
        cause=f"--set {override.pattern}.{override.key}={override.value}: not true or false",
        fix=f"write --set {override.pattern}.{override.key}=true",
    )


def apply_to_plan(plan: BuildPlan, overrides: Sequence[Override], names: dict[str, str]) -> BuildPlan:
    """The plan with the overrides that match its variant (labels, no-cache)."""
    labels, no_cache = dict(plan.labels), plan.no_cache
    for override in overrides:
        if not override.matches(plan.variant.key, plan.variant.target_name, names):
            continue
        if override.key == "no-cache":
            no_cache = _flag(override)
        else:
            labels[override.key.removeprefix("labels.")] = override.value
    return replace(plan, labels=labels, no_cache=no_cache)


def metadata(found: dict[str, Any]) -> dict[str, Any]:
    """buildx's metadata of one built (or pushed) variant, from its JSON outcome."""
    entry: dict[str, Any] = {
        "containerimage.config.digest": found.get("image_id"),
        "image.name": ",".join(found.get("tags", [])),
        "pytorch-cuda.variant": found.get("variant"),
    }
    digests = found.get("digests") or {}
    if digests:
        entry["containerimage.digest"] = next(iter(digests.values()))
        entry["image.name"] = ",".join(digests)
    return entry


def write_metadata(path: Path, results: dict[str, dict[str, Any]]) -> None:
    """One target: buildx build's flat JSON; several: bake's, keyed by target."""
    body = metadata(next(iter(results.values()))) if len(results) == 1 else {t: metadata(r) for t, r in results.items()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise UserError(
            cause=f"cannot write --metadata-file {path} ({error.strerror})", fix="pass a writable path"
        ) from None
