"""`build.py build` and `build.py push`: read the request, plan the lineage, run it, print the outcome."""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rich.text import Text

from pytorch_cuda.bake.set_overrides import BUILD_KEYS, apply_to_plan, check_platform, parse_overrides, scope_of
from pytorch_cuda.cli import overrides
from pytorch_cuda.cli.metadata_file import write_candidate_file, write_metadata
from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.cli.several import build_each, exit_status, print_results, results_json
from pytorch_cuda.console.output import dumps, outcome_dict, print_outcome
from pytorch_cuda.console.progress import make_progress
from pytorch_cuda.engine.build_client import find_build_client
from pytorch_cuda.engine.connection import connect
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.errors import UserError
from pytorch_cuda.image_build.build_mutex import variant_mutex
from pytorch_cuda.image_build.build_plan import BuildPlan, BuildRequest, plan_lineage
from pytorch_cuda.image_build.gitinfo import build_facts
from pytorch_cuda.image_build.lineage import execute_lineage
from pytorch_cuda.image_build.pipeline import BuildOutcome, PipelineHooks
from pytorch_cuda.image_build.reproducible import build_apart_and_compare, rebuild_and_compare, require_reproducible
from pytorch_cuda.locks.resolving import require_lock
from pytorch_cuda.matrix.target_selection import expand_targets
from pytorch_cuda.network.index_probe import probe_index


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    parents = [shared.build, shared.matrix, shared.common]
    build = verbs.add_parser(
        "build",
        parents=parents,
        help="build, check and tag one variant per target (its parents first)",
        description="Build the variant's image on the Docker engine, run the conformance suite's CPU checks "
        "inside the candidate, and only then move its tags. A child flavour is built FROM its parent, which is "
        "built first. Several --target (or a group: all) build one after another; a target that fails is "
        "reported and the others are still built; the exit status is the worst of theirs (2 over 1).",
        epilog=examples(
            "build --target cu12",
            "build --target cu12 --flavour jupyter --dry-run --json",
            "build --target cu12 --verify-reproducible",
            "build --target cu12 --flavour jupyter --verify-reproducible-apart",
            "build --target cu12 --target cu13",
            "build --target all --dry-run",
            "build --target cu12 --set 'cu128-*.labels.org.example.team=ml' --metadata-file build.json",
        ),
    )
    build.add_argument(
        "--verify-reproducible",
        action="store_true",
        help="after the build, build each variant again from scratch (--no-cache, same base) and compare the image "
        "IDs; exit 1 naming the differing layers and files when they differ (docs/release.md)",
    )
    build.add_argument(
        "--verify-reproducible-apart",
        action="store_true",
        help="after the build, build each variant twice from scratch at another file time (SOURCE_DATE_EPOCH a "
        "second later, same base), the first removed before the second, and compare the two image IDs: the same "
        "check without rebuilding a layer the engine holds, which Docker 20.10 would keep on disk (docs/release.md)",
    )
    overrides.options(build)
    build.set_defaults(run=run, registry=None, push_candidate=False)
    push = verbs.add_parser(
        "push",
        parents=parents,
        help="build, then push the full tag and the aliases to a registry",
        description="Everything `build` does, then push to --registry: the immutable full tag first, the moving "
        "aliases last, all or none; prints each digest.",
        epilog=examples(
            "push --target cu12 --registry 127.0.0.1:5000/ci",
            "push --target cu12 --registry HOST --candidate",
            "push --target all --registry 127.0.0.1:5000/ci",
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
        dest="push_candidate",
        action="store_true",
        help="push only the candidate tag (candidate-<variant>-<build id>) and print its digest; no release tag "
        "moves in the registry (nightly and release test that digest on GPUs first)",
    )
    push.add_argument(
        "--candidate-file",
        type=Path,
        metavar="PATH",
        help="with --candidate and one variant: write the candidate as REPOSITORY@sha256:... to PATH (what the GPU "
        "jobs pull)",
    )
    overrides.options(push)
    push.set_defaults(run=run, refuse=no_registry)


def no_registry(args: argparse.Namespace) -> str | None:
    """`push --registry ''` would build, check and tag, and push nothing: refused before any work."""
    if not args.registry.strip():
        return (
            "--registry is empty: push needs a registry to push to (e.g. --registry 127.0.0.1:5000/ci); to build "
            "and tag without pushing, run `build.py build`"
        )
    return None


def request(args: argparse.Namespace, target: str) -> BuildRequest:
    return BuildRequest(
        target=target,
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
    """One target: as it always was. Several: each in turn, a failure reported and the others still built."""
    check_platform(args.platform)
    matrix = session.matrix(args)
    targets = expand_targets(matrix, args.target, args.flavour)
    scope = scope_of(matrix)
    sets = parse_overrides(args.set, BUILD_KEYS, scope)
    if not targets:
        raise UserError(
            cause=f"no target of --target {' '.join(args.target)} has the flavour {args.flavour!r}",
            fix="name a target that has it (see `python build.py list`), or leave out --flavour",
        )
    engine: list[DockerEngine] = []  # connected once, on the first target that builds
    facts = build_facts(session.root())  # one revision for every image of this run

    def one(target: str) -> dict[str, Any]:
        plans = [apply_to_plan(p, sets) for p in plan_lineage(matrix, request(args, target), session.root(), facts)]
        if not engine:  # a dry run checks the engine as the real run does: down is exit 2, the same paragraph
            engine.append(DockerEngine(connect(), find_build_client()))
        if args.dry_run:  # plans only what a build would build: a variant with no lock is left out, and why
            for plan in plans:
                require_lock(plan.variant, session.root(), _offline)
            return {**plans[-1].as_dict(), "built_first": [p.as_dict() for p in plans[:-1]]}
        outcomes, hooks = _execute(plans, engine[0], args, session)
        if not args.json:
            for outcome in outcomes:
                print_outcome(session.out, outcome)
        found = _outcomes_dict(outcomes)
        if getattr(args, "verify_reproducible", False):
            checked = rebuild_and_compare(outcomes, engine[0], hooks)
            found["reproducibility"] = [check.as_dict() for check in checked]
            require_reproducible(checked)
        if getattr(args, "verify_reproducible_apart", False):
            checked = build_apart_and_compare(outcomes, engine[0], hooks)
            found["reproducibility"] = found.get("reproducibility", []) + [check.as_dict() for check in checked]
            require_reproducible(checked)
        return found

    candidate_file = getattr(args, "candidate_file", None)
    if candidate_file is not None and (not args.push_candidate or len(targets) != 1):
        raise UserError(
            cause="--candidate-file writes the candidate of one variant's `push --candidate`",
            fix="add --candidate and name one target and flavour, or leave out --candidate-file",
        )
    if len(targets) == 1:
        found = one(targets[0])
        if args.metadata_file and not args.dry_run:
            write_metadata(args.metadata_file, {targets[0]: found}, several=False)
        if candidate_file is not None and not args.dry_run:
            write_candidate_file(candidate_file, found)
        if args.json:
            print(dumps(found))
        elif args.dry_run:
            session.out.print_json(dumps(found))
        return 0
    results = build_each(targets, one, session.err)
    if args.metadata_file and not args.dry_run:
        built = {r.target: r.found for r in results if r.found is not None}
        write_metadata(args.metadata_file, built, several=True)
    if args.json:
        print(dumps(results_json(results)))
    else:
        print_results(session.out, results, dry_run=args.dry_run)
    return exit_status(results)


def _offline(index: str) -> None:
    """A dry run probes no index: it says a lock is missing, not whether it could be made from here."""


def _execute(
    plans: list[BuildPlan], engine: DockerEngine, args: argparse.Namespace, session: Session
) -> tuple[list[BuildOutcome], PipelineHooks]:
    plan = plans[-1]
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
        return execute_lineage(plans, engine, hooks), hooks


def _outcomes_dict(outcomes: list[BuildOutcome]) -> dict[str, Any]:
    digests = {ref: digest for o in outcomes if o.published for ref, digest in o.published.digests.items()}
    last = outcome_dict(outcomes[-1])
    return {**last, "digests": digests, "built_first": [outcome_dict(o) for o in outcomes[:-1]]}
