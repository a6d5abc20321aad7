"""`build.py bake`: the matrix as a docker buildx bake file (JSON), for those who build with their own buildx:
one bake target per variant (its rendered Dockerfile, tags, labels, linux/amd64), a child flavour FROM its
parent's bake target (a named context), and groups: default, all, one per matrix target and one per alias and
per matrix.yaml group (each: its targets' variants), so `docker buildx bake cu12` works. What bake builds has not
passed the in-image checks: `build.py build` is what gates the tags."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pytorch_cuda.build.build_plan import PIP_CA_SECRET, BuildRequest, plan_lineage
from pytorch_cuda.cli.bake_set import apply_sets
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.cli.overrides import BAKE_KEYS, PLATFORM, check_platform, options, parse_overrides, scope_of
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.target_selection import expand_targets, group_members
from pytorch_cuda.matrix.variants import all_variants


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "bake",
        parents=[shared.matrix, shared.common],
        help="print the matrix as a docker-bake.json for docker buildx bake",
        description="Print (or write with --file) a docker buildx bake definition in JSON: a target per variant "
        "(the rendered images/VARIANT/Dockerfile, its tags and labels, linux/amd64), each child flavour FROM its "
        "parent's target through a named context, the base image as BASE_IMAGE (the matrix's upstream), and the "
        "groups default, all, one per matrix target, alias and matrix.yaml group; the CA bundle (--ca-bundle, "
        "else $PIP_CERT, $SSL_CERT_FILE or $REQUESTS_CA_BUNDLE) as the pip_ca secret. `docker buildx bake -f "
        "docker-bake.json all` builds the matrix with your own buildx; the in-image checks that gate build.py's "
        "tags do not run there.",
        epilog=examples("bake", "bake --file docker-bake.json --target cu12", "bake --set '*.cache-to=type=inline'"),
    )
    verb.add_argument("--target", action="append", metavar="NAME", help="these targets or groups (default: all)")
    verb.add_argument("--file", type=Path, metavar="PATH", help="write the JSON there instead of stdout")
    options(verb, metadata=False)
    ca_bundle_option(verb)
    verb.set_defaults(run=bake)


def bake(args: argparse.Namespace, session: Session) -> int:
    check_platform(args.platform)
    matrix, root = session.matrix(args), session.root()
    scope = scope_of(matrix)
    sets = parse_overrides(args.set, BAKE_KEYS, scope)
    chosen = set(expand_targets(matrix, args.target or ["all"]))
    targets: dict[str, dict[str, Any]] = {}
    owners: dict[str, str] = {}
    for variant in (v for v in all_variants(matrix) if v.target_name in chosen):
        asked = BuildRequest(variant.target_name, variant.flavour_name, ca_bundle=args.ca_bundle, dry_run=True)
        plans = plan_lineage(matrix, asked, root)
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
    apply_sets(targets, owners, sets, scope)
    document = {"group": _groups(matrix, owners), "target": targets}
    text = json.dumps(document, indent=2) + "\n"
    if args.file:
        args.file.write_text(text, encoding="utf-8")
        session.err.print(f"wrote {args.file} ({len(targets)} targets)", highlight=False)
    else:
        print(text, end="")
    return 0


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
