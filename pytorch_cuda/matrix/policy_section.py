"""matrix.yaml's `policy:` section as a closed object: its keys and their types, so that a mistyped key
(`min_release_ag`) is refused by every command that reads the matrix (`list`, `render --check`, `build`), with
the key it may have meant, and the editor's schema (matrix.schema.json) marks it. What each rule admits is read
by `build.py bump` (pytorch_cuda/bump/bump_policy.py), which also checks that a rule is a keyword or a PEP 440
specifier."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictInt

from pytorch_cuda.matrix.value_types import Frozen, Name

RULE = (
    "compatible (same major version), patch (same major.minor), pinned (never moved), or a PEP 440 specifier "
    "such as '2.9.*' or '>=2.5,<3'"
)


class PolicySection(Frozen):
    torch: str | None = Field(default=None, description=f"the rule for torch: {RULE}; default patch")
    python_packages: str | None = Field(default=None, description=f"the rule for every other pin: {RULE}")
    packages: dict[Name, str] = Field(default_factory=dict, description="per-package rules that override it")
    base: Literal["follow", "pinned"] | None = Field(
        default=None, description="a registry base's digest follows its tag (follow), or stays (pinned)"
    )
    min_release_age: StrictInt | None = Field(
        default=None, ge=0, description="days a release must have been on its index before bump moves to it"
    )

    def as_section(self) -> dict[str, Any]:
        """The section as matrix.yaml wrote it (the keys it gave), for bump's policy parser."""
        return self.model_dump(exclude_unset=True)
