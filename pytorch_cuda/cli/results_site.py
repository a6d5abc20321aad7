"""`results ingest|list|judge` (the results store, pytorch_cuda/run_store; its histories judged by
pytorch_cuda/decay) and `site` (the static site, pytorch_cuda/site).

Exit status: 0 done (judge: no confirmed regression in any history's latest nightly run); 1 (judge only) a
confirmed regression; 2 bad input (a malformed, foreign-schema or duplicate results file, a folder that is not a
store, a record changed by hand): nothing already stored is lost, and a refused ingest stores none of its files.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.output import dumps
from pytorch_cuda.run_store import read_store
from pytorch_cuda.run_store.backend import store_location

_STORE = (
    "a folder of run files, a SQLite database (PATH.sqlite, the default for a growing store), or a PostgreSQL "
    "database shared by a fleet (postgresql://USER@HOST:PORT/DB; the password in PGPASSWORD)"
)


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    results_verb = verbs.add_parser(
        "results",
        parents=[shared.common],
        help="the results store: ingest conformance result files, list the stored runs",
        description="A content-addressed store of conformance runs (docs/site.md): one immutable file per run, "
        "named by the sha256 of its results, under the image digest it tested (or, for a bare host, its torch "
        "and CUDA versions); index.json is generated from them. Exit 2: a malformed, foreign-schema or "
        "duplicate file (nothing is stored), or a folder that is not a store.",
        epilog=examples(
            "results ingest out/results.json --store store/",
            "results ingest busy-gpu.json --store store/ --fault busy-gpu",
            "results list --store store/",
            "results judge --store store/ --noise",
            "results ingest out/results.json --store results.sqlite --skip-duplicates",
            "results export --store results.sqlite --out archive/",
            'results accept gemm.tf32.tflops --store store/ --history H100 --reason "cuBLAS 13.1; see #123"',
        ),
    )
    actions = results_verb.add_subparsers(dest="action", required=True, metavar="ACTION")
    ingest_verb = actions.add_parser("ingest", parents=[shared.common], help="validate and store result files")
    ingest_verb.add_argument("files", nargs="+", type=Path, metavar="RESULTS.json", help="result files")
    ingest_verb.add_argument(
        "--store", type=store_location, required=True, metavar="STORE", help="(a new one starts) " + _STORE
    )
    ingest_verb.add_argument(
        "--fault", metavar="NAME", help="the runs ran under this injected fault: shown and flagged, never a baseline"
    )
    ingest_verb.add_argument(
        "--control",
        metavar="NAME",
        help="the runs ran under this legitimate setup (a control): judged, stored apart, never a baseline",
    )
    ingest_verb.add_argument(
        "--image-digest", metavar="sha256:...", help="the digest of the image tested, for a file that lacks one"
    )
    ingest_verb.add_argument(
        "--skip-duplicates", action="store_true", help="a file already stored is noted, not refused (the nightly)"
    )
    ingest_verb.set_defaults(run=run_ingest)
    list_verb = actions.add_parser("list", parents=[shared.common], help="the stored runs, oldest first")
    list_verb.add_argument("--store", type=store_location, required=True, metavar="STORE", help=_STORE)
    list_verb.set_defaults(run=list_runs)
    judge_verb = actions.add_parser(
        "judge",
        parents=[shared.common],
        help="each history's learned noise and what it flags (exit 1: a confirmed regression in a latest run)",
    )
    judge_verb.add_argument("--store", type=store_location, required=True, metavar="STORE", help=_STORE)
    judge_verb.add_argument("--noise", action="store_true", help="also print the noise learned for each metric")
    judge_verb.set_defaults(run=judge_runs)
    export_verb = actions.add_parser(
        "export",
        parents=[shared.common],
        help="copy every run and accepted regression into another store: run files (the archive) or a database",
    )
    export_verb.add_argument("--store", type=store_location, required=True, metavar="STORE", help=_STORE)
    export_verb.add_argument(
        "--out",
        type=store_location,
        required=True,
        metavar="STORE",
        help="where they are copied (a new one starts): " + _STORE,
    )
    export_verb.set_defaults(run=export_runs)
    accept_verb = actions.add_parser(
        "accept",
        parents=[shared.common],
        help="accept a metric's open regression with a reason: its level becomes the history's new centre",
    )
    accept_verb.add_argument("metric", metavar="METRIC", help="the metric, as `results judge` names it")
    accept_verb.add_argument("--store", type=store_location, required=True, metavar="STORE", help=_STORE)
    accept_verb.add_argument("--reason", required=True, metavar="TEXT", help="why the new level is right")
    accept_verb.add_argument(
        "--history", metavar="TEXT", help="only this history (its text, slug, or part of its GPU name)"
    )
    accept_verb.set_defaults(run=accept_regression)
    site_verb = verbs.add_parser(
        "site",
        parents=[shared.common],
        help="the static site of a results store: image x GPU, history, regressions, expected support",
        description="Write the static site of a results store into --out: the image x GPU table, each history with "
        "its noise band, the open regressions and the expected bf16 support (docs/site.md). A folder that holds a "
        "previous build is updated incrementally (only the pages whose inputs changed); --full renders every page.",
        epilog=examples("site --store store/ --out site/", "site --judge --store results.sqlite --out site/"),
    )
    site_verb.add_argument("--store", type=store_location, required=True, metavar="STORE", help=_STORE)
    site_verb.add_argument("--out", type=Path, required=True, metavar="DIR", help="where the site is written")
    site_verb.add_argument(
        "--full",
        action="store_true",
        help="render every page; by default a folder holding an earlier build's page digests (.site-inputs.json) "
        "gets only the pages whose inputs changed rewritten, and the pages that no longer exist removed",
    )
    site_verb.add_argument(
        "--judge",
        action="store_true",
        help="judge each history first and keep its window, as `results judge` does, in the same read of the store "
        "(the nightly: one process instead of `results judge` then `site`)",
    )
    site_verb.set_defaults(run=site)


def run_ingest(args: argparse.Namespace, session: Session) -> int:
    from pytorch_cuda.run_store import ingest as store_runs

    done = store_runs(
        args.files,
        args.store,
        fault=args.fault,
        control=args.control,
        image_digest=args.image_digest,
        skip_duplicates=args.skip_duplicates,
    )
    if args.json:
        stored = [{"sha256": s.record.sha256, "path": str(s.path), "gpu": s.gpu} for s in done.stored]
        print(dumps({"stored": stored, "duplicates": list(done.duplicates)}))
        return 0
    for s in done.stored:
        session.out.print(f"stored {s.path} ({s.gpu}, {s.record.subject.label})", highlight=False)
    for sha in done.duplicates:
        session.out.print(f"already stored: {sha}", highlight=False)
    return 0


def list_runs(args: argparse.Namespace, session: Session) -> int:
    from pytorch_cuda.run_store.store import index_document

    document = index_document(read_store(args.store))
    if args.json:
        print(dumps(document))
        return 0
    for row in document["runs"]:
        status = "complete" if row["complete"] else f"exit {row['exit_status']}"
        fault = f"  fault: {row['fault']}" if row["fault"] else ""
        line = f"{row['started_at']}  {row['sha256'][:12]}  {row['gpu']}  {row['label']}  {status}{fault}"
        session.out.print(line, highlight=False)
    return 0


def judge_runs(args: argparse.Namespace, session: Session) -> int:
    from pytorch_cuda.decay.report import judged_document, judged_lines
    from pytorch_cuda.decay.windowed import judge_windowed
    from pytorch_cuda.run_store.backend import open_store

    windows = judge_windowed(open_store(args.store))
    judged = [w.judged for w in windows]
    confirmed = sum(len(j.latest_regressions()) for j in judged)
    if args.json:
        document = judged_document(judged)
        for history, w in zip(document["histories"], windows, strict=True):
            history["window"] = w.document()
        print(dumps(document))
    else:
        for line in judged_lines(judged, noise=args.noise):
            session.out.print(line, highlight=False, markup=False)  # "[partial]" and "[fault: ...]" are text
    return 1 if confirmed else 0


def export_runs(args: argparse.Namespace, session: Session) -> int:
    from pytorch_cuda.run_store.export import export_store

    done = export_store(args.store, args.out)
    if args.json:
        print(dumps({"runs": done.runs, "already": done.already, "accepted": done.accepted, "out": str(args.out)}))
        return 0
    session.out.print(
        f"exported {done.runs} run(s) and {done.accepted} accepted regression(s) into {args.out} "
        f"({done.already} already there)",
        highlight=False,
    )
    return 0


def accept_regression(args: argparse.Namespace, session: Session) -> int:
    from pytorch_cuda.decay.accepting import accept_open

    done = accept_open(args.store, args.metric, args.reason, args.history)
    if args.json:
        print(dumps({"accepted": [{"sha256": a.sha256, **a.document()} for a in done]}))
        return 0
    for a in done:
        session.out.print(
            f"accepted {a.metric} on {a.history} through run {a.through[:12]}: {a.reason}", highlight=False
        )
    return 0


def site(args: argparse.Namespace, session: Session) -> int:
    from pytorch_cuda.decay.windowed import WINDOW_RUNS
    from pytorch_cuda.site.site_writer import build_site  # matplotlib loads only for `site`

    built = build_site(args.store, args.out, full=args.full, judge=WINDOW_RUNS if args.judge else None)
    if args.json:
        counts = {"pages": len(built.pages), "written": built.written, "removed": built.removed}
        print(
            dumps({**counts, "incremental": built.incremental, "regressions": built.regressions, "out": str(args.out)})
        )
    else:
        how = f"{built.written} of {len(built.pages)} pages rewritten, {built.removed} removed (incremental)"
        session.out.print(
            f"{how if built.incremental else f'wrote {len(built.pages)} pages'} into {args.out} "
            f"({built.regressions} confirmed regression(s) in the latest nightly runs)",
            highlight=False,
        )
    return 0
