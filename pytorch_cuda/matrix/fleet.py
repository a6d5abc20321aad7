"""The GPU runner fleet: typed, validated objects loaded from fleet.yaml (labels and GPU count per runner)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.strict_yaml import load_unique

SELF_HOSTED = "self-hosted"
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


class FleetError(UserError):
    """fleet.yaml is missing, malformed or invalid."""


def _label(value: str) -> str:
    if not _LABEL.fullmatch(value):
        raise ValueError(f"{value!r} is not a runner label (letters, digits, '.', '_' or '-')")
    return value


def _name(value: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not a runner name (lower-case letters, digits, '_' or '-')")
    return value


Label = Annotated[str, AfterValidator(_label)]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Runner(_Frozen):
    """One kind of self-hosted GPU runner: its runner group, its GPU model, how many GPUs it has, and its labels."""

    group: Annotated[str, AfterValidator(_name)] = Field(
        description="the organisation's runner group (runs-on: {group, labels}), restricted to the workflows that "
        "define the GPU jobs (docs/release.md, 'Runner hardening')"
    )
    gpu: str = Field(min_length=1, description="the GPU model, as nvidia-smi names it")
    gpus: int = Field(ge=1, le=64, description="GPUs the runner exposes to `docker run --gpus all`")
    labels: tuple[Label, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _self_hosted(self) -> Runner:
        if SELF_HOSTED not in self.labels:
            raise ValueError(f"labels {list(self.labels)} must include {SELF_HOSTED!r}: GPU jobs run on own machines")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"labels {list(self.labels)} name a label twice")
        return self

    @property
    def require_args(self) -> tuple[str, ...]:
        """The conformance options that make a missing GPU a failure: --require-gpus N past one GPU."""
        return ("--require-gpu",) if self.gpus == 1 else ("--require-gpu", "--require-gpus", str(self.gpus))


class Builder(_Frozen):
    """Where the build jobs run: a GitHub-hosted image name, or the labels of a self-hosted builder."""

    labels: tuple[Label, ...] = Field(min_length=1)


class Fleet(_Frozen):
    schema_: Literal[1] = Field(alias="schema")
    builder: Builder
    runners: dict[Annotated[str, AfterValidator(_name)], Runner] = Field(min_length=1)

    @model_validator(mode="after")
    def _runners_are_told_apart(self) -> Fleet:
        """A job for runner A lands on any machine with all of A's labels: so no label set may hold another's."""
        for a, first in self.runners.items():
            for b, second in self.runners.items():
                if a != b and set(first.labels) <= set(second.labels):
                    raise ValueError(
                        f"the labels of runner {a!r} are all labels of runner {b!r} too, so {a!r}'s jobs could run "
                        f"on {b!r}'s machines; give each runner a label the other lacks (e.g. gpus-{first.gpus})"
                    )
        return self

    def custom_labels(self) -> set[str]:
        """The self-hosted runners' labels GitHub does not define itself (what .github/actionlint.yaml declares)."""
        builtin = {SELF_HOSTED, "linux", "x64", "arm64", "arm", "windows", "macos"}
        sets = [runner.labels for runner in self.runners.values()]
        if SELF_HOSTED in self.builder.labels:
            sets.append(self.builder.labels)
        return {label for labels in sets for label in labels} - builtin


def load_fleet(path: Path) -> Fleet:
    """Load and validate fleet.yaml, raising FleetError with a one-paragraph explanation."""
    fix = f"edit {path} (see the comments in the committed fleet.yaml), then run `python build.py ci-matrix`"
    try:
        data = load_unique(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FleetError(
            cause=f"the fleet file {path} does not exist",
            fix="run from the repository root or pass --fleet PATH to an existing fleet.yaml",
        ) from None
    except (OSError, yaml.YAMLError) as exc:
        raise FleetError(cause=f"cannot read {path}: {exc}", fix=fix) from exc
    try:
        return Fleet.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False)[:5]:
            where = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-")) or "(top level)"
            problems.append(f"at key {where!r}: {err['msg'].removeprefix('Value error, ')}")
        raise FleetError(cause=f"{path} does not validate: {'; '.join(problems)}", fix=fix) from exc
