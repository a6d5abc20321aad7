"""The matrix as a docker buildx bake file (JSON): one bake target per variant (its rendered Dockerfile, tags, labels,
linux/amd64), a child flavour FROM its parent's bake target (a named context), and groups: default, all, one per
matrix target and one per alias and per matrix.yaml group (each: its targets' variants), `--set` applied."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytorch_cuda.bake.bake_set import apply_sets
from pytorch_cuda.bake.set_overrides import BAKE_KEYS, PLATFORM, parse_overrides, scope_of
from pytorch_cuda.errors import UserError
from pytorch_cuda.image_build.build_plan import PIP_CA_SECRET, BuildRequest, plan_lineage
from pytorch_cuda.image_build.gitinfo import build_facts
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.target_selection import expand_targets, group_members
from pytorch_cuda.matrix.variants import all_variants


def bake_document(
    matrix: Matrix, root: Path, names: Sequence[str], sets_given: Sequence[str], ca_bundle: Path | None
) -> dict[str, Any]:
    """The bake file of the variants of ``names`` (targets or groups), with the ``--set`` values applied."""
    scope = scope_of(matrix)
    sets = parse_overrides(sets_given, BAKE_KEYS, scope)
    chosen = _chosen_variants(matrix, root, names)
    facts = build_facts(root)  # once: every target of the file carries one revision, whatever git says meanwhile
    targets: dict[str, dict[str, Any]] = {}
    owners: dict[str, str] = {}
    for variant in (v for v in all_variants(matrix) if v.key in chosen):
        asked = BuildRequest(variant.target_name, variant.flavour_name, ca_bundle=ca_bundle, dry_run=True)
        plans = plan_lineage(matrix, asked, root, facts)
        plan, parents = plans[-1], plans[:-1]
        entry: dict[str, Any] = {
            "context": ".",
            "dockerfile": str(plan.dockerfile.relative_to(root)),
            "tags": list(plan.tags.all_refs),
            "labels": dict(plan.labels),
            "platforms": [PLATFORM],
            "args": {"BASE_IMAGE": _base_ref(matrix, variant.base_name)} if not parents else {},
        }
        if parents:
            parent = parents[-1]
            entry["args"]["PARENT_IMAGE"] = parent.tags.full_ref
            entry["contexts"] = {parent.tags.full_ref: f"target:{parent.variant.key}"}
        if plan.ca_bundle:  # --ca-bundle, else the environment's default, as build uses it
            entry["secret"] = [f"id={PIP_CA_SECRET},src={plan.ca_bundle}"]
        targets[variant.key], owners[variant.key] = entry, variant.target_name
    apply_sets(targets, sets)
    return {"group": _groups(matrix, owners), "target": targets}


def _chosen_variants(matrix: Matrix, root: Path, names: Sequence[str]) -> set[str]:
    """The bake targets (variant keys) of ``names``: a target, alias or group stands for its variants, as in
    the file's groups; a bake target (cu128-runtime) for itself, with the parents it is built FROM (its
    named context must be a target of the file)."""
    variants = {v.key: v for v in all_variants(matrix)}
    keys = [name for name in names if name in variants]
    others = [name for name in names if name not in variants]
    targets = set(expand_targets(matrix, others)) if others else set()
    chosen = {key for key, v in variants.items() if v.target_name in targets}
    for key in keys:
        variant = variants[key]
        asked = BuildRequest(variant.target_name, variant.flavour_name, dry_run=True)
        chosen.update(plan.variant.key for plan in plan_lineage(matrix, asked, root))
    return chosen


def _base_ref(matrix: Matrix, name: str) -> str:
    """What FROM a bake build starts on: the base's upstream (by digest where the matrix pins one)."""
    base = matrix.bases[name]
    if not base.upstream:
        raise UserError(
            cause=f"base {name} has no upstream: it is only bootstrapped here, which buildx cannot do",
            fix=f"give bases.{name}.upstream in matrix.yaml (a registry image), or build with build.py",
        )
    return str(base.upstream)


def _groups(matrix: Matrix, owners: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """bake groups: all, default (the default variant), and one per matrix target, alias and matrix.yaml group
    (the variants of its targets). The alias `default` is bake's default group, the default variant."""
    keys = list(owners)
    groups = {"all": {"targets": keys}}
    default = f"{matrix.project.default_target}-{matrix.project.default_flavour}"
    groups["default"] = {"targets": [default] if default in keys else keys}
    named = {target: [target] for target in matrix.targets}
    named.update({alias: [target] for alias, target in matrix.target_names().items() if alias != target})
    named.update({name: members for name, members in group_members(matrix).items() if name != "all"})
    for name, members in named.items():
        if name in groups:  # the alias `default` names the default target; bake's default is its default variant
            continue
        mine = [key for key in keys if owners[key] in members]
        if mine:
            groups[name] = {"targets": mine}
    return groups
