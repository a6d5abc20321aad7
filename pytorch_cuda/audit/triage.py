"""The security lane's triage decisions, committed in vex-triage.yaml: for an advisory of a package, what a person
decided (CycloneDX's analysis: `not_affected` with a justification, `false_positive`, `resolved`, `exploitable`
or `in_triage`) and why. The VEX (and the SBOM it goes into) carries each decision; a finding decided
`not_affected`, `false_positive` or `resolved` no longer opens a pull request or an issue, nor fails the lane.

    decisions:
      - id: GHSA-wj6h-64fc-37mp          # the advisory's id or one of its aliases
        package: ecdsa
        state: not_affected
        justification: code_not_reachable
        detail: the images never sign with ecdsa; it is only pip's transitive dependency
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.value_types import Frozen

TRIAGE_FILE = "vex-triage.yaml"
State = Literal["not_affected", "false_positive", "resolved", "exploitable", "in_triage"]
Justification = Literal[
    "code_not_present", "code_not_reachable", "requires_configuration", "requires_dependency",
    "requires_environment", "protected_by_compiler", "protected_at_runtime", "protected_at_perimeter",
    "protected_by_mitigating_control",
]  # fmt: skip
SETTLED = ("not_affected", "false_positive", "resolved")  # no pull request, no issue, no failed lane


class Decision(Frozen):
    id: str = Field(min_length=1)
    package: str = Field(min_length=1)
    state: State
    justification: Justification | None = None
    detail: str = Field(min_length=1)

    @model_validator(mode="after")
    def _justified(self) -> Decision:
        if self.state == "not_affected" and self.justification is None:
            raise ValueError(f"{self.id} ({self.package}) is not_affected without a justification")
        return self

    def matches(self, package: str, ids: Sequence[str]) -> bool:
        return self.package.lower() == package.lower() and self.id in ids

    def analysis(self) -> dict[str, str]:
        found = {"state": self.state, "detail": self.detail}
        return found | ({"justification": self.justification} if self.justification else {})


class Triage(Frozen):
    decisions: tuple[Decision, ...] = ()

    def decision(self, package: str, ids: Sequence[str]) -> Decision | None:
        return next((d for d in self.decisions if d.matches(package, ids)), None)


def load_triage(path: Path) -> Triage:
    """The committed decisions; none when the file does not exist."""
    if not path.is_file():
        return Triage()
    try:
        return Triage.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except (ValidationError, yaml.YAMLError) as error:
        first = str(error).splitlines()[:3]
        raise UserError(
            cause=f"{path.name} is not a triage file: {' / '.join(first)}",
            fix="each decision needs id, package, state (not_affected needs a justification) and detail; see "
            "docs/security.md",
        ) from None
