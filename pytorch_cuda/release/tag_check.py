"""`build.py check-tag TAG`: a release tag must name the torch version matrix.yaml builds.

Accepted: `v<torch>` (v2.9.1), or `v<torch>-<n>` (v2.9.1-2: a rebuild of the same torch, e.g. for a
base-image fix). `refs/tags/` in front (GITHUB_REF) is dropped. Anything else, or a torch version
that is not every target's, is bad input: one paragraph, exit 2, before anything is built or pushed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix

_TAG = re.compile(r"v(?P<torch>\d+\.\d+\.\d+)(?:-(?P<rebuild>[1-9]\d*))?")


@dataclass(frozen=True)
class ReleaseTag:
    tag: str
    torch: str
    rebuild: int  # 0 for v2.9.1, n for v2.9.1-n

    def as_dict(self) -> dict[str, object]:
        return {"tag": self.tag, "torch": self.torch, "rebuild": self.rebuild, "matches": True}


def check_release_tag(matrix: Matrix, ref: str) -> ReleaseTag:
    """The parsed tag, when it names the torch version of every target; else a UserError."""
    tag = ref.removeprefix("refs/tags/")
    match = _TAG.fullmatch(tag)
    versions = sorted({target.torch for target in matrix.targets.values()})
    if len(versions) != 1:
        per_target = ", ".join(f"{name}: {t.torch}" for name, t in sorted(matrix.targets.items()))
        raise UserError(
            cause=f"matrix.yaml's targets build different torch versions ({per_target}), so no one tag names them",
            fix="give every target the same torch version before tagging a release",
        )
    torch = versions[0]
    if match is None:
        raise UserError(
            cause=f"the tag {tag!r} is not a release tag of the form v<torch> or v<torch>-<n> (e.g. v{torch})",
            fix=f"delete it and tag the commit v{torch} (or v{torch}-2 for a rebuild of the same torch)",
        )
    if match["torch"] != torch:
        raise UserError(
            cause=f"the tag {tag!r} names torch {match['torch']}, but matrix.yaml builds torch {torch}",
            fix=f"tag the commit v{torch}, or change the targets' torch pins in matrix.yaml (and lock them) first",
        )
    return ReleaseTag(tag=tag, torch=torch, rebuild=int(match["rebuild"] or 0))
