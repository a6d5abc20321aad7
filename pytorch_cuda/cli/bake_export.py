"""`build.py bake`: the matrix as a docker buildx bake file (JSON), for those who build with their own buildx:
one bake target per variant (its rendered Dockerfile, tags, labels, linux/amd64), a child flavour FROM its
parent's bake target (a named context), and groups: default, all, and one per matrix target. What bake builds
has not passed the in-image checks: `build.py build` is what gates the tags."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pytorch_cuda.build.build_plan import BuildRequest, plan_lineage
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.cli.overrides import BAKE_KEYS, PLATFORM, Override, check_platform, options, parse_overrides
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.target_selection import expand_targets
from pytorch_cuda.matrix.variants import all_variants


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "bake",
        parents=[shared.matrix, shared.common],
        help="print the matrix as a docker-bake.json for docker buildx bake",
        description="Print (or write with --file) a docker buildx bake definition in JSON: a target per variant "
        "(the rendered images/VARIANT/Dockerfile, its tags and labels, linux/amd64), each child flavour FROM its "
        "parent's target through a named context, the base image as BASE_IMAGE (the matrix's upstream), and the "
        "groups default, all and one per matrix target. `docker buildx bake -f docker-bake.json all` builds the "
        "matrix with your own buildx; the in-image checks that gate build.py's tags do not run there.",
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
    sets = parse_overrides(args.set, BAKE_KEYS)
    chosen = set(expand_targets(matrix, args.target or ["all"]))
    targets: dict[str, dict[str, Any]] = {}
    for variant in (v for v in all_variants(matrix) if v.target_name in chosen):
        plans = plan_lineage(matrix, BuildRequest(variant.target_name, variant.flavour_name, dry_run=True), root)
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
        if args.ca_bundle:
            entry["secret"] = [f"id=pip_ca,src={args.ca_bundle}"]
        targets[variant.key] = _apply(entry, variant.key, variant.target_name, sets, matrix.target_names())
    document = {"group": _groups(matrix, list(targets)), "target": targets}
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


def _groups(matrix: Matrix, keys: list[str]) -> dict[str, dict[str, list[str]]]:
    groups = {"all": {"targets": keys}}
    default = f"{matrix.project.default_target}-{matrix.project.default_flavour}"
    groups["default"] = {"targets": [default] if default in keys else keys}
    for target in matrix.targets:
        mine = [key for key in keys if key.startswith(f"{target}-")]
        if mine:
            groups[target] = {"targets": mine}
    return groups


def _apply(entry: dict[str, Any], key: str, target: str, sets: list[Override], names: dict[str, str]) -> dict[str, Any]:
    """bake's --set semantics on one target: a map key (labels.X, args.X) or a whole attribute."""
    for override in (o for o in sets if o.matches(key, target, names)):
        attribute, _, name = override.key.partition(".")
        if name:
            entry.setdefault(attribute, {})[name] = override.value
        elif attribute == "platform":
            entry["platforms"] = [check_platform(override.value)]
        elif attribute in ("no-cache", "pull"):
            entry[attribute] = override.value.lower() in {"true", "1"}
        else:
            entry[attribute] = override.value.split(",")
    return entry
