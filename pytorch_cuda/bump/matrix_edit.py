"""Rewrite one scalar of matrix.yaml in place, keeping every comment, quote style and the layout around it."""

from __future__ import annotations

import re

from pytorch_cuda.errors import MatrixError

_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_.-]+):(?P<rest>.*)$")
_VALUE = re.compile(r"^(?P<space> *)(?P<quote>[\"']?)(?P<value>[^\"'#\s]+)(?P=quote)(?P<tail>\s*(#.*)?)$")


def set_scalar(text: str, path: tuple[str, ...], value: str) -> str:
    """`text` with the scalar at `path` (e.g. ("targets", "cu128", "torch")) set to `value`."""
    lines = text.splitlines(keepends=True)
    start, end, indent = 0, len(lines), -1
    for depth, key in enumerate(path):
        found, level = None, None
        for number in range(start, end):
            match = _KEY.match(lines[number].rstrip("\n"))
            if match is None:
                continue
            if len(match["indent"]) <= indent:
                break
            level = len(match["indent"]) if level is None else level  # the first key sets the block's indent
            if match["key"] == key and len(match["indent"]) == level:
                found = number, len(match["indent"]), match
                break
        if found is None:
            raise MatrixError(
                cause=f"matrix.yaml has no key {'.'.join(path[: depth + 1])} to rewrite",
                fix="restore the key (see the committed matrix.yaml) and run bump again",
            )
        start, indent, match = found[0] + 1, found[1], found[2]
        if depth == len(path) - 1:
            scalar = _VALUE.match(match["rest"])
            if scalar is None:
                raise MatrixError(
                    cause=f"matrix.yaml's {'.'.join(path)} is not a one-line scalar bump can rewrite",
                    fix='write it as `key: "1.2.3"` on one line',
                )
            newline = "\n" if lines[found[0]].endswith("\n") else ""
            rest = f"{scalar['space']}{scalar['quote']}{value}{scalar['quote']}{scalar['tail']}"
            lines[found[0]] = f"{match['indent']}{key}:{rest}{newline}"
    return "".join(lines)
