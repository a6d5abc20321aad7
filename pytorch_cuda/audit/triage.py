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
from pytorch_cuda.matrix.strict_yaml import load_unique
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
    """The committed decisions; none when the file does not exist. Read before the audit starts (audit_flow), so a
    bad file is one paragraph at once, naming each wrong decision by its place and id, not after the audit."""
    if not path.is_file():
        return Triage()
    try:
        found = load_unique(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        raise UserError(
            cause=f"{path.name} is not YAML{line} ({getattr(error, 'problem', None) or error})",
            fix=f"correct the YAML; {_FORMAT}",
        ) from None
    try:
        return Triage.model_validate(found)
    except ValidationError as error:
        raise UserError(
            cause=f"{path.name} is not a triage file: {'; '.join(_problems(found, error))}", fix=_FORMAT
        ) from None


_FORMAT = (
    "each decision needs id, package, state (not_affected, false_positive, resolved, exploitable or in_triage; "
    "not_affected needs a justification) and detail, and nothing else; see docs/security.md"
)


def _problems(found: object, error: ValidationError) -> list[str]:
    """Each of pydantic's errors as `decisions[2] (CVE-2026-1, openssl): state: not one of ...`."""
    problems = []
    for item in error.errors():
        location = list(item["loc"])
        where, rest = "the file", location
        if location[:1] == ["decisions"] and len(location) > 1 and isinstance(location[1], int):
            where, rest = f"decisions[{location[1]}]{_named(found, location[1])}", location[2:]
        message = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] == "literal_error":
            message = f"{item['input']!r} is not one of {str(item['ctx']['expected']).replace(' or ', ', ')}"
        elif item["type"] == "extra_forbidden":
            message = "is not a key of a decision (a typo?)"
        elif item["type"] == "missing":
            message = "missing"
        key = ".".join(str(part) for part in rest)
        problems.append(f"{where}: {key + ': ' if key else ''}{message}")
    return problems


def _named(found: object, index: int) -> str:
    decisions = found.get("decisions") if isinstance(found, dict) else None
    if not isinstance(decisions, list) or index >= len(decisions) or not isinstance(decisions[index], dict):
        return ""
    named = [str(decisions[index][key]) for key in ("id", "package") if decisions[index].get(key)]
    return f" ({', '.join(named)})" if named else ""
