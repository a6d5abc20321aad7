"""bake's `--set` on the exported targets, as `docker buildx bake --set` applies it: a map key (labels.X,
args.X) is set; a list (tags, cache-from, cache-to, output) takes each value whole, commas and all, the first
--set replacing the file's list and each further one appending (KEY+= appends to the file's list); a boolean
(no-cache, pull) is read as Go's strconv.ParseBool; platform is a comma-separated list of linux/amd64 only.
Then no two images may share a tag."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytorch_cuda.bake.set_overrides import LIST_KEYS, Override, Scope, check_platform, is_flag
from pytorch_cuda.errors import UserError


def apply_sets(
    targets: dict[str, dict[str, Any]], owners: dict[str, str], sets: Sequence[Override], scope: Scope
) -> None:
    """Apply the --set values, in order, to each bake target (variant key -> entry; owners: key -> target)."""
    for key, entry in targets.items():
        replaced: set[str] = set()  # the list keys a plain --set has already replaced on this target
        for override in (o for o in sets if o.matches(key, owners[key], scope)):
            _apply(entry, override, replaced)
    _refuse_shared_tags(targets, sets)


def _apply(entry: dict[str, Any], override: Override, replaced: set[str]) -> None:
    attribute, _, name = override.key.partition(".")
    if name:
        entry.setdefault(attribute, {})[name] = override.value
    elif attribute == "platform":
        entry["platforms"] = [check_platform(p) for p in override.value.split(",")]
    elif attribute in ("no-cache", "pull"):
        entry[attribute] = is_flag(override)
    elif attribute in LIST_KEYS:
        if override.append or attribute in replaced:
            entry[attribute] = [*entry.get(attribute, []), override.value]
        else:
            entry[attribute] = [override.value]
            replaced.add(attribute)


def _refuse_shared_tags(targets: dict[str, dict[str, Any]], sets: Sequence[Override]) -> None:
    """A tag names one image: two targets given the same tag (--set cu12.tags=x on runtime and jupyter) would
    leave the tag on whichever bake built last."""
    owner: dict[str, str] = {}
    for key, entry in targets.items():
        for tag in entry.get("tags", []):
            if tag in owner:
                shown = ", ".join(f"--set {o.text!r}" for o in sets if o.key == "tags") or "the matrix"
                raise UserError(
                    cause=f"{shown} gives the tag {tag} to both {owner[tag]} and {key}; a tag names one image, "
                    "and bake would leave it on whichever target it built last",
                    fix=f"narrow the pattern to one variant (e.g. --set {key}.tags={tag}), or give each its own tag",
                )
            owner[tag] = key
