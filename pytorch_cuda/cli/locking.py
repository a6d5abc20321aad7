"""`build.py lock`: resolve each variant's requirements into its hash lock with uv, and print what changed."""

from __future__ import annotations

import argparse

from pytorch_cuda.bump.bump_policy import matrix_lock_cutoff
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.console.output import dumps, print_lock_changes
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.resolving import refresh_locks
from pytorch_cuda.locks.writing import Resolver
from pytorch_cuda.matrix.variants import all_variants, select_variant
from pytorch_cuda.network.ca_bundle import find_ca_bundle
from pytorch_cuda.network.index_probe import index_probe
from pytorch_cuda.render import render_all, write_rendered


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    both = [shared.matrix, shared.common]
    lock_verb = verbs.add_parser(
        "lock",
        parents=both,
        help="resolve requirements.txt into the hash-locked requirements.lock with uv, and print what changed",
        description="Make every lock current for its inputs, and print what changed. A lock whose inputs "
        "(requirements.txt, its index, a child's parent lock) are unchanged is left as it is; a stale one keeps "
        "its committed versions where the new pins allow (uv's preferences), so a pin moves only the locks that "
        "hold it. --upgrade is lock maintenance: every lock, the build-stage tools' (installer.lock, "
        "sbom-tool.lock) too, re-resolved to the newest releases min_release_age admits. Either way no transitive "
        "pin goes below its committed version (docs/bump.md).",
        epilog=examples("lock", "lock --target cu12 --flavour jupyter", "lock --upgrade --json"),
    )
    lock_verb.add_argument("--target", metavar="NAME", help="lock this target only (default: every variant)")
    lock_verb.add_argument("--flavour", metavar="NAME", help="with --target: this flavour (default: runtime)")
    lock_verb.add_argument(
        "--ignore-release-age",
        action="store_true",
        help="lock releases younger than policy's min_release_age too (by default no locked file, transitive "
        "ones included, is newer than that on an index that serves upload times: uv's --exclude-newer)",
    )
    lock_verb.add_argument(
        "--upgrade",
        action="store_true",
        help="lock maintenance: re-resolve every lock (without --target, the build-stage tools' too) to the "
        "newest admitted releases, never moving a pin back",
    )
    ca_bundle_option(lock_verb)
    lock_verb.set_defaults(run=lock)


def lock(args: argparse.Namespace, session: Session) -> int:
    matrix, root = session.matrix(args), session.root()
    if args.flavour and not args.target:
        raise UserError(cause="--flavour names a flavour of no target", fix="add --target, e.g. `--target cu12`")
    ca = find_ca_bundle(args.ca_bundle)
    ca_path = ca.path if ca else None
    variants = [select_variant(matrix, args.target, args.flavour)] if args.target else all_variants(matrix)
    gate = matrix_lock_cutoff(matrix, ca_path, ignore=args.ignore_release_age)
    changes, failures = refresh_locks(
        matrix,
        variants,
        root,
        Resolver(ca_path, probe=index_probe(ca_path), cutoff=gate),
        upgrade=args.upgrade,
        upgrade_tools=args.upgrade and not args.target,  # the tools belong to no target
    )
    write_rendered(render_all(matrix, root / "templates", root), root)  # the layer slices of the locks
    if args.json and not failures:
        print(dumps([
            {"path": str(c.path), "created": c.created, "changes": list(c.changes), "held": list(c.held)}
            for c in changes
        ]))  # fmt: skip
    elif not args.json:
        print_lock_changes(session.out, changes)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise UserError(cause="; ".join(f.cause for f in failures), fix="; ".join(f.fix for f in failures))
    return 0
