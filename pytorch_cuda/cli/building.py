"""The build command: plan each variant of the lineage, take the build locks, run the pipeline."""

from __future__ import annotations

import argparse
import uuid
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.text import Text

from pytorch_cuda.build_mutex import variant_mutex
from pytorch_cuda.cli.arguments import ROOT
from pytorch_cuda.console.output import dumps, outcome_dict, print_outcome
from pytorch_cuda.console.progress import make_progress
from pytorch_cuda.engine.build_client import find_build_client
from pytorch_cuda.engine.connection import connect
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.errors import UserError
from pytorch_cuda.flavours import lineage
from pytorch_cuda.gitinfo import build_facts
from pytorch_cuda.labels import BuildFacts
from pytorch_cuda.lineage import execute_lineage
from pytorch_cuda.locks.resolving import require_lock, stale_locks
from pytorch_cuda.matrix import Matrix
from pytorch_cuda.pipeline import PipelineHooks
from pytorch_cuda.plan import BuildPlan, make_plan
from pytorch_cuda.probes.ca_bundle import find_ca_bundle
from pytorch_cuda.probes.index_probe import probe_index
from pytorch_cuda.registry import parse_registry
from pytorch_cuda.render import find_stale, render_variant
from pytorch_cuda.variants import Variant, select_variant


def _plans(matrix: Matrix, args: argparse.Namespace) -> list[BuildPlan]:
    """The requested variant's plan, preceded by its parents' (a child is built FROM its parent)."""
    requested = select_variant(matrix, args.target, args.flavour)
    ca = find_ca_bundle(args.ca_bundle)
    facts = build_facts(ROOT)
    build_id = uuid.uuid4().hex[:8]
    registry = parse_registry(args.registry) if args.push else None
    if not args.dry_run:  # a missing lock is refused first, with its own fix (not "re-render")
        for variant in lineage(matrix, requested):
            require_lock(variant, ROOT, lambda index: probe_index(index, ca.path if ca else None))
    return [
        replace(
            _plan(matrix, args, variant, ca=(ca.path, ca.source) if ca else None, facts=facts, build_id=build_id),
            registry=registry,
            push_candidate=args.push_candidate,
        )
        for variant in lineage(matrix, requested)
    ]


def _plan(
    matrix: Matrix,
    args: argparse.Namespace,
    variant: Variant,
    *,
    ca: tuple[Path, str] | None,
    facts: BuildFacts,
    build_id: str,
) -> BuildPlan:
    rendered = render_variant(matrix, variant, ROOT / "templates", ROOT)
    stale = find_stale(rendered, ROOT, leftovers=False) + stale_locks(matrix, [variant], ROOT)
    if stale:
        raise UserError(
            cause=f"images/{variant.key} does not match the templates and matrix.yaml "
            f"({', '.join(f'{s.path} {s.reason}' for s in stale)})",
            fix="run `python build.py --render` (and commit images/) before building",
        )
    return make_plan(
        matrix,
        variant,
        root=ROOT,
        facts=facts,
        build_id=build_id,
        ca_bundle=ca[0] if ca else None,
        ca_source=ca[1] if ca else None,
        run_checks=not args.skip_checks,
        no_cache=args.no_cache,
        recheck=args.recheck,
    )


def build(matrix: Matrix, args: argparse.Namespace, out: Console, err: Console) -> int:
    plans = _plans(matrix, args)
    plan = plans[-1]
    if args.dry_run:
        shown = {**plan.as_dict(), "built_first": [p.as_dict() for p in plans[:-1]]}
        if args.json:
            print(dumps(shown))
        else:
            out.print_json(dumps(shown))
        return 0
    engine = DockerEngine(connect(), find_build_client())
    hooks = PipelineHooks(
        log=lambda message: err.print(Text("> ", style="bold") + Text(message), highlight=False),
        progress=make_progress(err, args.progress),
        index_probe=lambda: probe_index(plan.index_url, plan.ca_bundle),
        log_dir=args.log_dir,
    )
    with ExitStack() as held:  # one build per variant at a time, the parents' included
        for each in plans:
            held.enter_context(variant_mutex(args.log_dir, each.variant.key))
        outcomes = execute_lineage(plans, engine, hooks)
    if args.json:
        digests = {ref: digest for o in outcomes if o.published for ref, digest in o.published.digests.items()}
        last = outcome_dict(outcomes[-1])
        print(dumps({**last, "digests": digests, "built_first": [outcome_dict(o) for o in outcomes[:-1]]}))
    else:
        for outcome in outcomes:
            print_outcome(out, outcome)
    return 0
