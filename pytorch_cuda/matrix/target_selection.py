"""Several --target values (names, aliases, groups) -> the targets to work on, each once, in a stable order."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import ALL_TARGETS, Matrix, flavour_applies


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean 'cu12'?)' for the closest choice, or '' when none is close."""
    ordered = sorted(choices)
    # swapped letters first (lsit -> list), which difflib may rank below another word (site)
    close = [c for c in ordered if sorted(c) == sorted(word)][:1] or difflib.get_close_matches(word, ordered, 1, 0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def group_members(matrix: Matrix) -> dict[str, list[str]]:
    """Every group (the built-in `all` and matrix.yaml's `groups:`) -> its canonical target names."""
    names = matrix.target_names()
    groups = {ALL_TARGETS: sorted(matrix.targets)}
    groups.update({group: [names[m] for m in members] for group, members in matrix.groups.items()})
    return groups


def expand_targets(matrix: Matrix, requested: Sequence[str], flavour: str | None = None) -> list[str]:
    """The canonical target names that `--target A --target B ...` asks for, in the order given (a group's
    members in its own order). A target asked for twice, through a name, an alias or a group, is refused.
    A group leaves out the targets that `flavour` does not fit (devel: only targets with toolkit_wheels)."""
    names, groups = matrix.target_names(), group_members(matrix)
    fits = matrix.flavours.get(flavour or matrix.project.default_flavour)
    chosen: list[str] = []
    asked_by: dict[str, str] = {}
    for word in requested:
        if word in groups:
            members = [t for t in groups[word] if fits is None or flavour_applies(matrix.targets[t], fits)]
        elif word in names:
            members = [names[word]]
        else:
            raise unknown_target(matrix, word)
        for target in members:
            if target in asked_by:
                raise UserError(
                    cause=f"--target {word!r} asks for target {target!r} a second time (--target "
                    f"{asked_by[target]!r} already did); each target is built once per command",
                    fix="name each target once: drop the repeated --target, or use a group alone (e.g. "
                    f"`--target {ALL_TARGETS}`)",
                )
            asked_by[target] = word
            chosen.append(target)
    return chosen


def unknown_target(matrix: Matrix, word: str, *, groups: bool = True) -> UserError:
    accepted = [*matrix.target_names(), *(group_members(matrix) if groups else ())]
    return UserError(
        cause=f"--target {word!r} is not a target of the matrix{did_you_mean(word, accepted)}",
        fix=f"use one of: {', '.join(sorted(accepted))} (see `python build.py list`)",
    )
