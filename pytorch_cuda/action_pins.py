"""Every `uses:` of a workflow is pinned: an action by a 40-hex commit SHA with its version in a comment.

`python -m pytorch_cuda.action_pins FILE...` (scripts/lint-ci.sh) prints one line per unpinned `uses:`
(file:line: what is wrong and the fix) and exits 1, or exits 0. A tag or branch can be moved to other
code after review; a commit cannot, and the comment (`# v7.0.1`) says which release it is, for people
and for Dependabot, which updates both. Local workflows and actions (`./...`) need no pin; a
`docker://` image needs a `@sha256:` digest.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_USES = re.compile(r"""^\s*(?:-\s+)?uses:\s*["']?(?P<ref>[^\s"'#]+)["']?\s*(?:#\s*(?P<comment>.*))?$""")
_ACTION = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[^@\s]+)?@(?P<rev>[^\s@]+)")
_SHA = re.compile(r"[0-9a-f]{40}")
_VERSION = re.compile(r"v\d+(?:\.\d+){0,2}\b.*")
_DIGEST = re.compile(r"docker://\S+@sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Unpinned:
    path: Path
    line: int
    ref: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: uses: {self.ref}: {self.problem}"


def _problem(ref: str, comment: str | None) -> str | None:
    if ref.startswith("./"):
        return None
    if ref.startswith("docker://"):
        return None if _DIGEST.fullmatch(ref) else "a docker:// image must be pinned by @sha256:<digest>"
    action = _ACTION.fullmatch(ref)
    if action is None:
        return "not an owner/repo[/path]@<commit SHA> reference"
    if not _SHA.fullmatch(action["rev"]):
        return (
            f"pinned by {action['rev']!r}, which can be moved; pin the full 40-hex commit SHA of that release "
            "and put the version in a comment (`@<sha> # v1.2.3`)"
        )
    if comment is None or not _VERSION.fullmatch(comment.strip()):
        return "pinned by SHA but without a version comment; add `# v<version>` after it (e.g. `# v7.0.1`)"
    return None


def unpinned(path: Path, text: str) -> list[Unpinned]:
    """Every `uses:` line of one workflow (or action.yml) that is not pinned as described above."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _USES.match(line)
        if match is None:
            continue
        problem = _problem(match["ref"], match["comment"])
        if problem is not None:
            found.append(Unpinned(path, number, match["ref"], problem))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    paths = [Path(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print("usage: python -m pytorch_cuda.action_pins WORKFLOW.yml...", file=sys.stderr)
        return 2
    problems = [p for path in paths for p in unpinned(path, path.read_text(encoding="utf-8"))]
    for problem in problems:
        print(problem)
    if not problems:
        print(f"action pins: every uses: of {len(paths)} file(s) is pinned by commit SHA with a version comment")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
