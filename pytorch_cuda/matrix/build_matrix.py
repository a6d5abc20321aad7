"""The build matrix: typed, validated objects loaded from matrix.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from packaging.version import Version
from pydantic import (
    Field,
    HttpUrl,
    ValidationError,
    model_validator,
)

from pytorch_cuda.errors import MatrixError
from pytorch_cuda.matrix.bases import Base
from pytorch_cuda.matrix.policy_section import PolicySection
from pytorch_cuda.matrix.strict_yaml import load_unique
from pytorch_cuda.matrix.validation_errors import format_validation_error
from pytorch_cuda.matrix.value_types import CudaVersion, DebPackage, DriverVersion, Frozen, Name, PepVersion

MATRIX_YAML_SCHEMA = 1
TORCH_SERIES = "2.9"
ALL_TARGETS = "all"  # the built-in group: every target of the matrix


class Project(Frozen):
    name: Name
    repository: Name
    source: HttpUrl
    series: str
    default_target: Name
    default_flavour: Name
    # SOURCE_DATE_EPOCH of every stage: the time of every file in every layer (not the commit's, which is the
    # config's creation time), so a layer whose inputs did not change is the same bytes on every commit. From
    # 1980 on: zip cannot store older file times.
    source_date_epoch: int = Field(ge=315532800, description="file time of every layer (seconds since 1970)")

    @model_validator(mode="after")
    def _series_is_ours(self) -> Project:
        if self.series != TORCH_SERIES:
            raise ValueError(f"series {self.series!r} is not supported; this tool builds PyTorch {TORCH_SERIES}.x")
        return self


class Target(Frozen):
    aliases: tuple[Name, ...] = ()
    index: HttpUrl
    torch: PepVersion
    local_version: Name
    cuda: CudaVersion
    cudnn: PepVersion
    nccl: PepVersion
    triton: PepVersion
    wheel_family: Literal["cu12", "cu13"]
    min_driver: DriverVersion
    compat_driver: DriverVersion
    # The CUDA toolkit wheels a devel flavour adds (short name -> version), e.g.
    # {cuda-nvcc: 13.0.48}: the same CUDA release as torch's nvidia-cuda-runtime pin.
    # Empty: this target has no devel flavour (see matrix.yaml).
    toolkit_wheels: dict[Name, PepVersion] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> Target:
        if not self.torch.startswith(TORCH_SERIES + "."):
            raise ValueError(f"torch {self.torch!r} is not a PyTorch {TORCH_SERIES}.x release")
        if self.local_version != "cu" + self.cuda.replace(".", ""):
            raise ValueError(
                f"local_version {self.local_version!r} does not match cuda {self.cuda!r} "
                f"(expected 'cu{self.cuda.replace('.', '')}')"
            )
        if self.wheel_family != "cu" + self.cuda.split(".")[0]:
            raise ValueError(f"wheel_family {self.wheel_family!r} does not match cuda {self.cuda!r}")
        if Version(self.compat_driver) > Version(self.min_driver):
            raise ValueError("compat_driver must not be newer than min_driver")
        return self


class Flavour(Frozen):
    """One image flavour; with cuda_toolkit it exists only for targets that have toolkit_wheels."""

    template: str = Field(pattern=r"^[a-z0-9_-]+\.Dockerfile\.j2$")
    description: str
    # A child flavour is built FROM its parent's image and adds to it.
    parent: Name | None = None
    apt_packages: tuple[DebPackage, ...] = ()
    python_packages: dict[Name, PepVersion] = Field(default_factory=dict)
    cuda_toolkit: bool = Field(default=False, description="add the target's toolkit_wheels")


class User(Frozen):
    name: Name
    uid: int = Field(ge=1, le=65533)


class Matrix(Frozen):
    schema_: Literal[1] = Field(alias="schema")
    project: Project
    bases: dict[Name, Base]
    default_base: Name
    targets: dict[Name, Target]
    flavours: dict[Name, Flavour]
    python_packages: dict[Name, PepVersion]
    user: User
    # Named sets of targets (`build --target GROUP`), besides the built-in `all`.
    groups: dict[Name, tuple[Name, ...]] = Field(default_factory=dict)
    # What `build.py bump` may move each pin to: a closed object; its rules read by pytorch_cuda/bump/bump_policy.py.
    policy: PolicySection | None = None

    @model_validator(mode="after")
    def _references_resolve(self) -> Matrix:
        if self.default_base not in self.bases:
            raise ValueError(f"default_base {self.default_base!r} is not one of bases: {sorted(self.bases)}")
        if self.project.default_target not in self.targets:
            raise ValueError(
                f"project.default_target {self.project.default_target!r} is not one of targets: {sorted(self.targets)}"
            )
        if self.project.default_flavour not in self.flavours:
            raise ValueError(
                f"project.default_flavour {self.project.default_flavour!r} is not one of flavours: "
                f"{sorted(self.flavours)}"
            )
        _check_flavour_parents(self.flavours)
        toolkit_flavours = [name for name, flavour in self.flavours.items() if flavour.cuda_toolkit]
        if toolkit_flavours and not any(target.toolkit_wheels for target in self.targets.values()):
            raise ValueError(f"flavours {toolkit_flavours} add the CUDA toolkit but no target has toolkit_wheels")
        seen: dict[str, str] = {}
        for name, target in self.targets.items():
            for label in (name, *target.aliases):
                if label in seen:
                    raise ValueError(f"target name or alias {label!r} is used by both {seen[label]!r} and {name!r}")
                seen[label] = name
        _check_groups(self.groups, seen)
        return self

    def target_names(self) -> dict[str, str]:
        """Every accepted --target value (names and aliases) -> canonical target name."""
        names = {name: name for name in self.targets}
        for name, target in self.targets.items():
            names.update(dict.fromkeys(target.aliases, name))
        return names


def _check_flavour_parents(flavours: dict[str, Flavour]) -> None:
    """Every parent is a known flavour and no flavour is its own ancestor."""
    for name, flavour in flavours.items():
        if flavour.parent is not None and flavour.parent not in flavours:
            raise ValueError(
                f"flavour {name!r} has parent {flavour.parent!r}, which is not one of flavours: {sorted(flavours)}"
            )
    for name, flavour in flavours.items():
        chain = [name]
        parent = flavour.parent
        while parent is not None:
            if parent in chain:
                raise ValueError(f"flavour parents form a cycle: {' -> '.join([*chain, parent])}")
            chain.append(parent)
            parent = flavours[parent].parent


def _check_groups(groups: dict[str, tuple[str, ...]], targets: dict[str, str]) -> None:
    """A group names targets (or aliases), and its own name is no target's, nor the built-in `all`."""
    for name, members in groups.items():
        if name in targets or name == ALL_TARGETS:
            raise ValueError(f"group {name!r} has the name of a target, an alias or the built-in group 'all'")
        unknown = [member for member in members if member not in targets]
        if unknown or not members:
            raise ValueError(f"group {name!r} names {unknown or 'no target'}; a group lists targets or aliases")


def load_matrix(path: Path) -> Matrix:
    """Load and validate matrix.yaml, raising MatrixError with a one-paragraph explanation."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MatrixError(
            cause=f"the matrix file {path} does not exist",
            fix="run from the repository root or pass --matrix PATH to an existing matrix.yaml",
        ) from None
    except OSError as exc:
        raise MatrixError(
            cause=f"cannot read {path}: {exc.strerror}", fix="check the path and its permissions"
        ) from exc
    try:
        data = load_unique(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise MatrixError(
            cause=f"{path} is not valid YAML{where}: {problem}",
            fix="correct the YAML syntax (indentation, colons, quotes) at that place",
        ) from exc
    if not isinstance(data, dict):
        raise MatrixError(
            cause=f"{path} must hold a mapping at the top level", fix="start from the committed matrix.yaml"
        )
    schema = data.get("schema")
    if schema != MATRIX_YAML_SCHEMA:
        raise MatrixError(
            cause=f"at key 'schema' of {path} the value {schema!r} is not supported (allowed: {MATRIX_YAML_SCHEMA})",
            fix=f"set 'schema: {MATRIX_YAML_SCHEMA}' or use the version of pytorch-cuda that wrote this matrix",
        )
    try:
        return Matrix.model_validate(data)
    except ValidationError as exc:
        raise format_validation_error(Matrix, path, exc) from exc


def flavour_applies(target: Target, flavour: Flavour) -> bool:
    """A toolkit flavour needs the target's toolkit wheels; every other flavour fits every target."""
    return bool(target.toolkit_wheels) or not flavour.cuda_toolkit
