"""The version policy of `build.py bump`: the `policy:` section of matrix.yaml, parsed into typed rules.

    policy:
      torch: "2.9.*"                # a PEP 440 specifier; a bare version pattern means ==
      python_packages: compatible   # the rule for every other pin: compatible, patch, pinned or a specifier
      packages:                     # per-package overrides of that rule
        pytest: pinned
      base: follow                  # a registry base's `digest:` follows its tag (follow), or stays (pinned)
      min_release_age: 7            # days a release must have been on the index before bump moves to it

compatible: same major version (same major.minor below 1.0); patch: same major.minor; pinned: never moved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.policy_section import PolicySection
from pytorch_cuda.package_index.release_age import lock_cutoff
from pytorch_cuda.package_index.simple_index import project_files

Kind = Literal["compatible", "patch", "pinned", "specifier"]
KEYWORDS: tuple[Kind, ...] = ("compatible", "patch", "pinned")
_KEYS = ("torch", "python_packages", "packages", "base", "min_release_age")
BaseRule = Literal["follow", "pinned"]


class BumpPolicyError(UserError):
    """matrix.yaml's `policy:` section cannot be read (exit status 2)."""


@dataclass(frozen=True)
class Rule:
    """Which versions one pin may move to."""

    kind: Kind
    specifier: SpecifierSet | None = None  # kind == "specifier" only

    def allowed(self, current: Version) -> SpecifierSet:
        """The versions this rule admits for a pin now at `current`."""
        if self.kind == "specifier" and self.specifier is not None:
            return self.specifier
        if self.kind == "pinned":
            return SpecifierSet(f"=={current}")
        level = 2 if self.kind == "patch" or current.major == 0 else 1
        prefix = ".".join(str(part) for part in (*current.release, 0, 0)[:level])
        return SpecifierSet(f">={current},=={prefix}.*")

    def why(self, current: Version) -> str:
        """Why a move is allowed, for the table: the rule and what it admits."""
        if self.kind == "specifier":
            return f"policy {self.specifier}"
        return f"{self.kind} ({self.allowed(current)})"


@dataclass(frozen=True)
class Policy:
    torch: Rule
    python_packages: Rule
    packages: dict[str, Rule] = field(default_factory=dict)
    base: BaseRule = "follow"
    min_release_age: int = 0  # days; 0: no release-age gate

    def rule_for(self, name: str) -> Rule:
        if name == "torch":
            return self.torch
        return self.packages.get(name, self.python_packages)


def _error(cause: str) -> BumpPolicyError:
    return BumpPolicyError(
        cause=f"matrix.yaml's policy section is invalid: {cause}",
        fix="write each rule as one of compatible, patch, pinned or a PEP 440 specifier such as '2.9.*' or "
        "'>=2.5,<3' (docs/bump.md), e.g. `policy: {torch: \"2.9.*\", python_packages: compatible}`",
    )


def parse_rule(text: object, where: str) -> Rule:
    """One rule: a keyword, or a specifier (a bare version pattern such as 2.9.* means ==2.9.*)."""
    if not isinstance(text, str) or not text.strip():
        raise _error(f"{where} is {text!r}, not a rule (a string)")
    value = text.strip()
    if value in KEYWORDS:
        return Rule(kind=value)
    spelled = f"=={value}" if value[0].isdigit() else value
    try:
        specifier = SpecifierSet(spelled)
    except InvalidSpecifier:
        raise _error(f"{where} is {value!r}, neither {', '.join(KEYWORDS)} nor a PEP 440 specifier") from None
    if not specifier:
        raise _error(f"{where} is {value!r}, which admits every version")
    return Rule(kind="specifier", specifier=specifier)


def parse_policy(section: object) -> Policy:
    """The policy of matrix.yaml; without a section, torch stays in its series' patch releases (torch: patch)
    and every other pin moves within its major version (compatible). The matrix's PolicySection has its keys
    and types checked already; a mapping (a test's, or one written by hand) is checked here."""
    if isinstance(section, PolicySection):
        section = section.as_section()
    if section is None:
        return Policy(torch=Rule("patch"), python_packages=Rule("compatible"))
    if not isinstance(section, dict):
        raise _error(f"it holds {type(section).__name__} {section!r}, not a mapping")
    unknown = sorted(str(key) for key in section if key not in _KEYS)
    if unknown:
        raise _error(f"unknown key(s) {', '.join(unknown)} (allowed: {', '.join(_KEYS)})")
    overrides = section.get("packages") or {}
    if not isinstance(overrides, dict):
        raise _error(f"packages is {overrides!r}, not a mapping of package name to rule")
    base = section.get("base", "follow")
    if base not in ("follow", "pinned"):
        raise _error(f"base is {base!r}, neither follow (the digest follows its tag) nor pinned")
    age = section.get("min_release_age", 0)
    if isinstance(age, bool) or not isinstance(age, int) or age < 0:
        raise _error(f"min_release_age is {age!r}, not a whole number of days (0: no gate)")
    return Policy(
        min_release_age=age,
        base="pinned" if base == "pinned" else "follow",
        torch=parse_rule(section.get("torch", "patch"), "torch"),
        python_packages=parse_rule(section.get("python_packages", "compatible"), "python_packages"),
        packages={str(name): parse_rule(rule, f"packages.{name}") for name, rule in overrides.items()},
    )


def approved(policy: Policy, pins: list[str]) -> Policy:
    """The policy with each approved pin (a held-back pin ticked on the dependency dashboard, `bump --approve
    PIN`) free to move to its newest installable version for this run. torch's series is the project's own
    (matrix.yaml's project.series): a new series is a new release line, never approved here."""
    packages = dict(policy.packages)
    for pin in pins:
        if pin.startswith("targets."):
            raise _approve_error(pin, "torch and the pins it drags along follow the project's series (2.9)")
        name = pin.rsplit(".", 1)[-1]
        if not pin.startswith(("python_packages.", "flavours.")) or not name:
            raise _approve_error(pin, "it is not a Python package pin of matrix.yaml")
        packages[name] = Rule(kind="specifier", specifier=SpecifierSet(">=0"))
    return Policy(policy.torch, policy.python_packages, packages, policy.base, policy.min_release_age)


def _approve_error(pin: str, why: str) -> BumpPolicyError:
    return BumpPolicyError(
        cause=f"--approve {pin}: {why}",
        fix="approve a held-back package pin as the dashboard lists it, e.g. --approve python_packages.numpy",
    )


def matrix_lock_cutoff(matrix: Matrix, ca: Path | None, *, ignore: bool = False) -> Callable[[str], str | None]:
    """lock_cutoff with matrix.yaml's `policy: min_release_age` on the real indexes (none with `ignore`)."""
    days = 0 if ignore else parse_policy(matrix.policy).min_release_age
    return lock_cutoff(days, datetime.now(UTC), lambda index, name: project_files(index, name, ca))
