"""`build.py build` and `build.py push`: read the request, plan the lineage, run it, print the outcome."""

from __future__ import annotations

import argparse
from contextlib import ExitStack

from rich.text import Text

from pytorch_cuda.build_mutex import variant_mutex
from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.output import dumps, outcome_dict, print_outcome
from pytorch_cuda.console.progress import make_progress
from pytorch_cuda.engine.build_client import find_build_client
from pytorch_cuda.engine.connection import connect
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.lineage import execute_lineage
from pytorch_cuda.pipeline import PipelineHooks
from pytorch_cuda.planning import BuildRequest, plan_lineage
from pytorch_cuda.probes.index_probe import probe_index


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    parents = [shared.build, shared.matrix, shared.common]
    build = verbs.add_parser(
        "build",
        parents=parents,
        help="build, check and tag one variant (its parents first)",
        description="Build the variant's image on the Docker engine, run the conformance suite's CPU checks "
        "inside the candidate, and only then move its tags. A child flavour is built FROM its parent, which is "
        "built first.",
        epilog=examples("build --target cu12", "build --target cu12 --flavour jupyter --dry-run --json"),
    )
    build.set_defaults(run=run, registry=None, push_candidate=False)
    push = verbs.add_parser(
        "push",
        parents=parents,
        help="build, then push the full tag and the aliases to a registry",
        description="Everything `build` does, then push to --registry: the immutable full tag first, the moving "
        "aliases last, all or none; prints each digest.",
        epilog=examples(
            "push --target cu12 --registry 127.0.0.1:5000/ci", "push --target cu12 --registry HOST --candidate"
        ),
    )
    push.add_argument(
        "--registry",
        required=True,
        metavar="HOST[/NAMESPACE]",
        help="where the tags go, e.g. 127.0.0.1:5000/ci (-> 127.0.0.1:5000/ci/pytorch-cuda:v2.9); with a buildx "
        "docker-container builder the BuildKit cache goes there too",
    )
    push.add_argument(
        "--candidate",
        "--push-candidate",
        dest="push_candidate",
        action="store_true",
        help="push only the candidate tag (candidate-<variant>-<build id>) and print its digest; no release tag "
        "moves in the registry (nightly and release test that digest on GPUs first)",
    )
    push.set_defaults(run=run)


def request(args: argparse.Namespace) -> BuildRequest:
    return BuildRequest(
        target=args.target,
        flavour=args.flavour,
        ca_bundle=args.ca_bundle,
        dry_run=args.dry_run,
        run_checks=not args.skip_checks,
        no_cache=args.no_cache,
        recheck=args.recheck,
        registry=args.registry,
        push_candidate=args.push_candidate,
    )


def run(args: argparse.Namespace, session: Session) -> int:
    matrix = session.matrix(args)
    plans = plan_lineage(matrix, request(args), session.root())
    plan = plans[-1]
    if args.dry_run:
        shown = dumps({**plan.as_dict(), "built_first": [p.as_dict() for p in plans[:-1]]})
        if args.json:
            print(shown)
        else:
            session.out.print_json(shown)
        return 0
    engine = DockerEngine(connect(), find_build_client())
    log_dir = args.log_dir or session.root() / "build-output"
    hooks = PipelineHooks(
        log=lambda message: session.err.print(Text("> ", style="bold") + Text(message), highlight=False),
        progress=make_progress(session.err, args.progress),
        index_probe=lambda: probe_index(plan.index_url, plan.ca_bundle),
        log_dir=log_dir,
    )
    with ExitStack() as held:  # one build per variant at a time, the parents' included
        for each in plans:
            held.enter_context(variant_mutex(log_dir, each.variant.key))
        outcomes = execute_lineage(plans, engine, hooks)
    if args.json:
        digests = {ref: digest for o in outcomes if o.published for ref, digest in o.published.digests.items()}
        last = outcome_dict(outcomes[-1])
        print(dumps({**last, "digests": digests, "built_first": [outcome_dict(o) for o in outcomes[:-1]]}))
    else:
        for outcome in outcomes:
            print_outcome(session.out, outcome)
    return 0
