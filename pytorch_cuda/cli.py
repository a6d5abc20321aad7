"""The command line: list, render, check, plan and build image variants."""

from __future__ import annotations

import argparse
import signal
import sys
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console
from rich.text import Text

from pytorch_cuda import __version__
from pytorch_cuda.build_lock import variant_lock
from pytorch_cuda.console.progress import PROGRESS_MODES, make_progress
from pytorch_cuda.console.report import (
    dumps,
    matrix_rows,
    outcome_dict,
    print_lock_changes,
    print_matrix,
    print_outcome,
    print_stale,
)
from pytorch_cuda.engine.build_client import find_build_client
from pytorch_cuda.engine.connection import connect
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.errors import UserError
from pytorch_cuda.flavours import lineage
from pytorch_cuda.gitinfo import build_facts
from pytorch_cuda.labels import BuildFacts
from pytorch_cuda.lineage import execute_lineage
from pytorch_cuda.locking import lock_path, refresh_locks, require_lock, stale_locks
from pytorch_cuda.matrix import Matrix, load_matrix
from pytorch_cuda.pipeline import PipelineHooks
from pytorch_cuda.plan import BuildPlan, make_plan
from pytorch_cuda.probes.ca_bundle import find_ca_bundle
from pytorch_cuda.probes.index_probe import probe_index
from pytorch_cuda.render import find_stale, render_all, render_variant, write_rendered
from pytorch_cuda.variants import Variant, all_variants, select_variant

ROOT = Path(__file__).resolve().parent.parent

EPILOG = """\
examples:
  python build.py --target cu12              build, check and tag pytorch-cuda:v2.9
  python build.py --target cu12 --dry-run    show the plan; run nothing
  python build.py --target cu12 --flavour devel
                                             build the runtime, then devel FROM it
  python build.py --list                     targets, aliases, pins and tags
  python build.py --render                   render templates/ into images/
  python build.py --check-render             fail (exit 1) when images/ or a lock is stale
  python build.py --lock --target cu12       re-resolve images/cu128-runtime/requirements.lock; print what changed
  python build.py --report results.json --out report/
                                             precision report (report.html, .md, .json)

exit status: 0 success; 1 stale images/ or lock (--check-render), or failed in-image checks;
2 bad input or environment (matrix, target, engine, disk, index, download, missing lock, a build of
the same variant already running); 130 interrupted (Ctrl-C: no tag moved).
"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="build.py",
        description="Build PyTorch 2.9 + CUDA images from matrix.yaml on a Docker engine with BuildKit, run the "
        "conformance suite's CPU checks inside each candidate, and only then move its tags.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    action = p.add_mutually_exclusive_group()
    action.add_argument("--target", metavar="NAME", help="target to build: a name or alias from --list (e.g. cu12)")
    action.add_argument("--list", action="store_true", help="list targets, aliases, pins and tags")
    action.add_argument("--render", action="store_true", help="render templates/ into images/")
    action.add_argument(
        "--check-render",
        action="store_true",
        help="exit 1 when images/ differs from the templates, or a lock from its requirements",
    )
    action.add_argument(
        "--report",
        nargs="+",
        type=Path,
        metavar="RESULTS.json",
        help="write the precision support report of one or more conformance result files into --out",
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="where --report writes report.html, report.md, report.json")
    p.add_argument(
        "--lock",
        action="store_true",
        help="resolve requirements.txt into the hash-locked requirements.lock (of --target, else of every "
        "variant) with uv, and print what changed",
    )
    p.add_argument("--flavour", metavar="NAME", help="image flavour (default: the matrix's default, runtime)")
    p.add_argument("--dry-run", action="store_true", help="print the build plan and run nothing")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout (progress on stderr)")
    p.add_argument(
        "--ca-bundle",
        type=Path,
        metavar="PATH",
        help="CA bundle for pip and uv (default: $PIP_CERT, "
        "$SSL_CERT_FILE or $REQUESTS_CA_BUNDLE); passed as a BuildKit secret, never stored in the image",
    )
    p.add_argument("--skip-checks", action="store_true", help="tag without running the in-image checks (not advised)")
    p.add_argument(
        "--recheck",
        action="store_true",
        help="rerun the in-image checks even when this image ID already passed them with this suite",
    )
    p.add_argument("--no-cache", action="store_true", help="build every step again, ignoring the build cache")
    p.add_argument(
        "--progress",
        choices=PROGRESS_MODES,
        default="auto",
        help="build progress on stderr: auto (steps and notable lines), plain (the whole build log), tty (auto, "
        "coloured), quiet (none)",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s (pytorch-cuda) {__version__}")
    p.add_argument("--matrix", type=Path, default=ROOT / "matrix.yaml", metavar="PATH", help="matrix file")
    p.add_argument("--log-dir", type=Path, default=ROOT / "build-output", metavar="DIR", help="where build logs go")
    return p


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM (a killed CI job, `timeout`) cleans up like Ctrl-C


def main(argv: Sequence[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    # Even when started with SIGINT ignored (a background job of a script), `kill -INT` stops the build cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    cli = parser()
    args = cli.parse_args(argv)
    out = _console(stderr=False)
    err = _console(stderr=True)
    if not (args.target or args.list or args.render or args.check_render or args.lock or args.report):
        cli.error("one of the arguments --target --list --render --check-render --lock --report is required")
    if args.lock and (args.list or args.render or args.check_render or args.dry_run):
        cli.error("--lock goes alone or with --target (and --flavour)")
    if args.dry_run and not args.target:
        cli.error("--dry-run goes with --target")
    if bool(args.report) != bool(args.out):
        cli.error("--report and --out go together")
    try:
        if args.report:
            return _report(args.report, args.out, out, args.json)
        matrix = load_matrix(args.matrix)
        if args.list:
            return _list(matrix, out, args.json)
        if args.render:
            return _render(matrix, out, args.json)
        if args.check_render:
            return _check_render(matrix, out, args.json)
        if args.lock:
            return _lock(matrix, args, out)
        return _build(matrix, args, out, err)
    except UserError as error:
        if args.json:
            print(dumps({"error": type(error).__name__, "cause": error.cause, "fix": error.fix}))
        err.print(error.paragraph(), style="bold red", highlight=False, markup=False)
        return error.exit_status
    except KeyboardInterrupt:
        err.print("interrupted; no tag was moved", style="red")
        return 130


def _console(*, stderr: bool) -> Console:
    probe = Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=True, width=None if probe.is_terminal else 160)


def _list(matrix: Matrix, out: Console, as_json: bool) -> int:
    if as_json:
        print(dumps(matrix_rows(matrix)))
    else:
        print_matrix(out, matrix)
    return 0


def _report(paths: list[Path], out_dir: Path, out: Console, as_json: bool) -> int:
    from pytorch_cuda.precision_report import write_report  # matplotlib loads only for --report

    written = write_report(paths, out_dir)
    if as_json:
        print(dumps({"written": [str(p) for p in written]}))
    else:
        out.print("\n".join(f"wrote {p}" for p in written), highlight=False)
    return 0


def _render(matrix: Matrix, out: Console, as_json: bool) -> int:
    changed = write_rendered(render_all(matrix, ROOT / "templates"), ROOT)
    if as_json:
        print(dumps({"changed": [str(p) for p in changed]}))
    else:
        out.print("\n".join(f"rendered {p}" for p in changed) or "images/ is up to date", highlight=False)
    return 0


def _check_render(matrix: Matrix, out: Console, as_json: bool) -> int:
    variants = all_variants(matrix)
    stale = find_stale(render_all(matrix, ROOT / "templates", ROOT), ROOT) + stale_locks(matrix, variants, ROOT)
    unlocked = [str(lock_path(ROOT, v).relative_to(ROOT)) for v in variants if not lock_path(ROOT, v).exists()]
    if as_json:
        stale_rows = [{"path": str(s.path), "reason": s.reason} for s in stale]
        print(dumps({"up_to_date": not stale, "stale": stale_rows, "not_locked": unlocked}))
        return 1 if stale else 0
    for path in unlocked:
        out.print(f"note: {path} does not exist: that variant cannot be built until `build.py --lock` makes it")
    if stale:
        print_stale(out, stale)
        out.print("images/ is stale: run `python build.py --render` and commit the result", style="red")
    else:
        out.print("images/ matches templates/ and matrix.yaml")
    return 1 if stale else 0


def _lock(matrix: Matrix, args: argparse.Namespace, out: Console) -> int:
    ca = find_ca_bundle(args.ca_bundle)
    ca_path = ca.path if ca else None
    variants = [select_variant(matrix, args.target, args.flavour)] if args.target else all_variants(matrix)
    changes, failures = refresh_locks(
        matrix, variants, ROOT, ca_bundle=ca_path, probe=lambda i: probe_index(i, ca_path)
    )
    write_rendered(render_all(matrix, ROOT / "templates", ROOT), ROOT)  # the layer slices of the locks
    if args.json and not failures:
        print(dumps([{"path": str(c.path), "created": c.created, "changes": list(c.changes)} for c in changes]))
    elif not args.json:
        print_lock_changes(out, changes)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise UserError(cause="; ".join(f.cause for f in failures), fix="; ".join(f.fix for f in failures))
    return 0


def _plans(matrix: Matrix, args: argparse.Namespace) -> list[BuildPlan]:
    """The requested variant's plan, preceded by its parents' (a child is built FROM its parent)."""
    requested = select_variant(matrix, args.target, args.flavour)
    ca = find_ca_bundle(args.ca_bundle)
    facts = build_facts(ROOT)
    build_id = uuid.uuid4().hex[:8]
    return [
        _plan(matrix, args, variant, ca=(ca.path, ca.source) if ca else None, facts=facts, build_id=build_id)
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


def _build(matrix: Matrix, args: argparse.Namespace, out: Console, err: Console) -> int:
    plans = _plans(matrix, args)
    plan = plans[-1]
    if args.dry_run:
        shown = {**plan.as_dict(), "built_first": [p.as_dict() for p in plans[:-1]]}
        if args.json:
            print(dumps(shown))
        else:
            out.print_json(dumps(shown))
        return 0
    for each in plans:
        require_lock(each.variant, ROOT, lambda index: probe_index(index, plan.ca_bundle))
    engine = DockerEngine(connect(), find_build_client())
    hooks = PipelineHooks(
        log=lambda message: err.print(Text("> ", style="bold") + Text(message), highlight=False),
        progress=make_progress(err, args.progress),
        index_probe=lambda: probe_index(plan.index_url, plan.ca_bundle),
        log_dir=args.log_dir,
    )
    with ExitStack() as held:  # one build per variant at a time, the parents' included
        for each in plans:
            held.enter_context(variant_lock(args.log_dir, each.variant.key))
        outcomes = execute_lineage(plans, engine, hooks)
    if args.json:
        print(dumps({**outcome_dict(outcomes[-1]), "built_first": [outcome_dict(o) for o in outcomes[:-1]]}))
    else:
        for outcome in outcomes:
            print_outcome(out, outcome)
    return 0


if __name__ == "__main__":
    sys.exit(main())
