"""The old flag spellings (`build.py --target cu12`, `--list`, `--check-render`, ...) mapped onto the verbs.

`python build.py --target cu12` is the documented main job and scripts, workflows and tests call the other
flags, so they stay: each becomes its verb (`--check-render` is `render --check`, `--github-matrix` is
`matrix`, `--target T --push` is `push --target T`), with every other argument passed on unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

VERBS = ("build", "push", "render", "lock", "list", "report", "bump", "matrix", "content-hash", "check-tag", "release")
MODE_FLAGS: dict[str, tuple[str, ...]] = {
    "--list": ("list",),
    "--render": ("render",),
    "--check-render": ("render", "--check"),
    "--lock": ("lock",),
    "--report": ("report",),
    "--github-matrix": ("matrix",),
    "--content-hash": ("content-hash",),
    "--check-tag": ("check-tag",),
}
_PASS_THROUGH = frozenset({"-h", "--help", "--version"})


class LegacyFlagError(ValueError):
    """Old flags that name no command, or two commands at once."""


def _has(argv: Sequence[str], flag: str) -> bool:
    return any(token == flag or token.startswith(f"{flag}=") for token in argv)


def translate(argv: Sequence[str]) -> list[str]:
    """argv in the verb form; argv that starts with a word (a verb), --help or --version comes back as it is."""
    tokens = list(argv)
    if not tokens or not tokens[0].startswith("-") or tokens[0] in _PASS_THROUGH:  # a verb, or a mistyped one
        return tokens
    modes = [flag for flag in MODE_FLAGS if _has(tokens, flag)]
    if len(modes) > 1:
        raise LegacyFlagError(f"{' and '.join(modes)} cannot go together: each is a command of its own")
    if modes:
        return [*MODE_FLAGS[modes[0]], *_without(tokens, modes[0])]
    pushing = _has(tokens, "--push")
    if pushing != _has(tokens, "--registry") or (pushing and not _has(tokens, "--target")):
        raise LegacyFlagError("--push and --registry go together, with --target")
    if _has(tokens, "--push-candidate") and not pushing:
        raise LegacyFlagError("--push-candidate goes with --push and --registry")
    if pushing:
        return ["push", *[token for token in tokens if token != "--push"]]
    if _has(tokens, "--target"):
        return ["build", *tokens]
    raise LegacyFlagError(f"a command is required: one of {', '.join(VERBS)} (e.g. `build.py build --target cu12`)")


def _without(tokens: list[str], flag: str) -> list[str]:
    """tokens less the mode flag; its value (`--check-tag v2.9.1`, `--report a.json b.json`) stays, as arguments."""
    kept: list[str] = []
    for token in tokens:
        if token == flag:
            continue
        kept.append(token.partition("=")[2] if token.startswith(f"{flag}=") else token)
    return kept
