"""bake's `--set` on the exported targets, as `docker buildx bake --set` applies it: a map key (labels.X, args.X,
contexts.X) is set; a text key (context, dockerfile, target, shm-size) replaced; a list (tags, cache-from,
cache-to, output, secrets, attest) takes each value whole, commas and all, the first --set replacing the file's
list and each further one appending (KEY+= appends to the file's list); a boolean (no-cache, pull, push) is read
as Go's strconv.ParseBool, and push=true marks the outputs pushed as buildx does; platform is a comma-separated
list of linux/amd64 only. A list keeps each entry once (buildx's removeDupes). Then no two images may share a tag."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytorch_cuda.bake.set_overrides import ATTRIBUTES, BOOL_KEYS, LIST_KEYS, Override, is_flag
from pytorch_cuda.errors import UserError


def apply_sets(targets: dict[str, dict[str, Any]], sets: Sequence[Override]) -> None:
    """Apply the --set values, in order, to each bake target (variant key -> entry)."""
    for key, entry in targets.items():
        replaced: set[str] = set()  # the list keys a plain --set has already replaced on this target
        push: bool | None = None
        for override in (o for o in sets if o.matches(key)):
            if override.key == "push":
                push = is_flag(override)
            else:
                _apply(entry, override, replaced)
        if push is not None:
            entry["output"] = with_push(entry.get("output", []), push=push)
        for attribute in ("tags", "cache-from", "cache-to", "output", "secret", "attest", "platforms"):
            if attribute in entry:
                entry[attribute] = list(dict.fromkeys(entry[attribute]))
        if entry.get("output") == []:
            del entry["output"]
    _refuse_shared_tags(targets, sets)


def _apply(entry: dict[str, Any], override: Override, replaced: set[str]) -> None:
    attribute, _, name = override.key.partition(".")
    attribute = ATTRIBUTES.get(attribute, attribute)
    if name:
        entry.setdefault(attribute, {})[name] = override.value
    elif attribute == "platforms":
        entry["platforms"] = override.value.split(",")
    elif override.key in BOOL_KEYS:
        entry[attribute] = is_flag(override)
    elif override.key in LIST_KEYS:
        if override.append or attribute in replaced:
            entry[attribute] = [*entry.get(attribute, []), override.value]
        else:
            entry[attribute] = [override.value]
            replaced.add(attribute)
    else:
        entry[attribute] = override.value


def with_push(outputs: Sequence[str], *, push: bool) -> list[str]:
    """`push=BOOL` on a target's outputs, as current buildx applies it: true marks each image output push=true
    and, where no output would push (none, or only docker ones), adds type=image,push=true; false marks each
    image output push=false and drops the registry ones. (buildx 0.13.1 did it otherwise: docs/cli.md.)"""
    found: list[str] = []
    for output in outputs:
        fields = dict(field.partition("=")[::2] for field in output.split(","))
        if fields.get("type") == "registry" and not push:
            continue
        if fields.get("type") == "image":
            fields["push"] = "true" if push else "false"
        found.append(",".join(f"{k}={v}" for k, v in fields.items()) if fields.get("type") == "image" else output)
    pushes = any(not each.startswith("type=docker") for each in found)
    return [*found, "type=image,push=true"] if push and not pushes else found


def _refuse_shared_tags(targets: dict[str, dict[str, Any]], sets: Sequence[Override]) -> None:
    """A tag names one image: two targets given the same tag (--set 'cu128-*.tags=x' on runtime and jupyter)
    would leave the tag on whichever bake built last. One target given a tag twice keeps it once, as buildx."""
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
