"""The verbs that need no Docker engine: `list`, `render [--check]`, `lock` and `report`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytorch_cuda.bump.release_age import matrix_lock_cutoff
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.console.output import dumps, matrix_rows, print_lock_changes, print_matrix, print_stale
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.child_flavour import own_lock_path
from pytorch_cuda.locks.resolving import refresh_locks, stale_locks
from pytorch_cuda.locks.writing import Resolver
from pytorch_cuda.matrix.json_schema import stale_schema, write_schema
from pytorch_cuda.matrix.variants import all_variants, select_variant
from pytorch_cuda.network.ca_bundle import find_ca_bundle
from pytorch_cuda.network.index_probe import probe_index
from pytorch_cuda.render import find_stale, render_all, write_rendered


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    both = [shared.matrix, shared.common]
    verbs.add_parser("list", parents=both, help="list targets, aliases, pins and tags").set_defaults(run=list_matrix)
    render_verb = verbs.add_parser(
        "render",
        parents=both,
        help="render templates/ into images/",
        epilog=examples("render", "render --check --json"),
    )
    render_verb.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when images/ differs from the templates, or a lock from its requirements",
    )
    render_verb.set_defaults(run=run_render)
    lock_verb = verbs.add_parser(
        "lock",
        parents=both,
        help="resolve requirements.txt into the hash-locked requirements.lock with uv, and print what changed",
        epilog=examples("lock", "lock --target cu12 --flavour jupyter"),
    )
    lock_verb.add_argument("--target", metavar="NAME", help="lock this target only (default: every variant)")
    lock_verb.add_argument("--flavour", metavar="NAME", help="with --target: this flavour (default: runtime)")
    lock_verb.add_argument(
        "--ignore-release-age",
        action="store_true",
        help="lock releases younger than policy's min_release_age too (by default no locked file, transitive "
        "ones included, is newer than that on an index that serves upload times: uv's --exclude-newer)",
    )
    ca_bundle_option(lock_verb)
    lock_verb.set_defaults(run=lock)
    report_verb = verbs.add_parser(
        "report",
        parents=[shared.common],
        help="the precision support report of conformance result files, or --diff of two",
        description="Write the precision support report of one or more conformance result files into --out; a "
        "precision-check report (precision-check --json) among them gets its own page, precision-check-NAME.html. "
        "With --diff OLD NEW: what changed between two runs (GEMM ratios, AMP speed and memory, compile "
        "speed-up, verdicts, tests), as Markdown on stdout (or DIR/diff.md with --out) and, with --html PATH, as "
        "an HTML page, regressions beyond noise marked (docs/bump.md).",
        epilog=examples(
            "report results-h100.json results-t4.json --out report/",
            "report --diff release/results.json candidate/results.json",
            "report --diff release/results.json candidate/results.json --html diff.html",
            "report --diff candidate/results.json --baseline-store results-store/",
        ),
    )
    report_verb.add_argument("results", nargs="+", type=Path, metavar="RESULTS.json", help="result files")
    report_verb.add_argument("--out", type=Path, metavar="DIR", help="where report.* (or diff.md) are written")
    report_verb.add_argument(
        "--diff", action="store_true", help="compare two result files, OLD then NEW, instead of reporting them"
    )
    report_verb.add_argument(
        "--html", type=Path, metavar="PATH", help="with --diff: also write the diff as an HTML page to PATH"
    )
    report_verb.add_argument(
        "--baseline-store",
        type=Path,
        metavar="DIR",
        help="with --diff: take OLD from this results store: the latest released run of NEW's variant on NEW's GPU "
        "class (an OLD given is the fallback)",
    )
    report_verb.add_argument("--html-url", metavar="URL", help="with --diff: link the HTML page from the Markdown")
    report_verb.set_defaults(run=report)


def list_matrix(args: argparse.Namespace, session: Session) -> int:
    matrix = session.matrix(args)
    if args.json:
        print(dumps(matrix_rows(matrix)))
    else:
        print_matrix(session.out, matrix)
    return 0


def report(args: argparse.Namespace, session: Session) -> int:
    if args.diff:
        return report_diff(args, session)
    if args.html is not None:
        raise UserError(cause="report --html PATH is for --diff OLD NEW", fix="add --diff, or use --out DIR")
    if args.out is None:
        raise UserError(cause="report needs --out DIR", fix="add `--out report/` (or `--diff OLD NEW` to compare two)")
    from pytorch_cuda.precision_report import write_report  # matplotlib loads only for `report`

    written = write_report(args.results, args.out)
    if args.json:
        print(dumps({"written": [str(p) for p in written]}))
    else:
        session.out.print("\n".join(f"wrote {p}" for p in written), highlight=False)
    return 0


def report_diff(args: argparse.Namespace, session: Session) -> int:
    from pytorch_cuda.cli.report_baseline import diff_pair
    from pytorch_cuda.precision_report.diff import diff_results
    from pytorch_cuda.precision_report.diff_markdown import render_diff_markdown

    old, new, baseline = diff_pair(args.results, args.baseline_store)
    session.err.print(baseline, highlight=False, markup=False)
    diff = diff_results(old, new)
    text = render_diff_markdown(diff, args.html_url)
    if args.out is not None:
        _write(args.out / "diff.md", text, "--out")
    if args.html is not None:
        from pytorch_cuda.precision_report.diff_html import render_diff_html

        _write(args.html, render_diff_html(diff), "--html")
        if not args.json:
            session.err.print(f"wrote {args.html} ({diff.regressions} regression(s) beyond noise)", highlight=False)
    if args.json:
        html = {"html": str(args.html)} if args.html is not None else {}
        facts = {"regressions": diff.regressions, "not_like_for_like": list(diff.mismatches), "baseline": baseline}
        print(dumps({**facts, "markdown": text, **html}))
    elif args.out is None:
        print(text)
    else:
        session.out.print(f"wrote {args.out / 'diff.md'} ({diff.regressions} regression(s) beyond noise)")
    return 0


def _write(path: Path, text: str, option: str) -> None:
    from pytorch_cuda.precision_report import ReportInputError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ReportInputError(f"cannot write {path} ({error.strerror})", f"pass a writable {option}") from None


def run_render(args: argparse.Namespace, session: Session) -> int:
    if args.check:
        return check_render(args, session)
    matrix, root = session.matrix(args), session.root()
    changed = write_rendered(render_all(matrix, root / "templates"), root) + write_schema(root)
    if args.json:
        print(dumps({"changed": [str(p) for p in changed]}))
    else:
        session.out.print("\n".join(f"rendered {p}" for p in changed) or "images/ is up to date", highlight=False)
    return 0


def check_render(args: argparse.Namespace, session: Session) -> int:
    matrix, root, out = session.matrix(args), session.root(), session.out
    variants = all_variants(matrix)
    stale = find_stale(render_all(matrix, root / "templates", root), root) + stale_locks(matrix, variants, root)
    stale += stale_schema(root)
    unlocked = [  # a child's lock is made once its parent's is; until then neither can be built
        str(path.relative_to(root)) for path in (own_lock_path(root, v) for v in variants) if not path.exists()
    ]
    unlocked = [path for path in unlocked if not any(path == str(s.path) for s in stale)]
    if args.json:
        stale_rows = [{"path": str(s.path), "reason": s.reason} for s in stale]
        print(dumps({"up_to_date": not stale, "stale": stale_rows, "not_locked": unlocked}))
        return 1 if stale else 0
    for path in unlocked:
        out.print(f"note: {path} does not exist: that variant cannot be built until `build.py lock` makes it")
    if stale:
        print_stale(out, stale)
        out.print("images/ is stale: run `python build.py render` and commit the result", style="red")
    else:
        out.print("images/ matches templates/ and matrix.yaml")
    return 1 if stale else 0


def lock(args: argparse.Namespace, session: Session) -> int:
    matrix, root = session.matrix(args), session.root()
    if args.flavour and not args.target:
        raise UserError(cause="--flavour names a flavour of no target", fix="add --target, e.g. `--target cu12`")
    ca = find_ca_bundle(args.ca_bundle)
    ca_path = ca.path if ca else None
    variants = [select_variant(matrix, args.target, args.flavour)] if args.target else all_variants(matrix)
    gate = matrix_lock_cutoff(matrix, ca_path, ignore=args.ignore_release_age)
    changes, failures = refresh_locks(
        matrix, variants, root, Resolver(ca_path, probe=lambda i: probe_index(i, ca_path), cutoff=gate)
    )
    write_rendered(render_all(matrix, root / "templates", root), root)  # the layer slices of the locks
    if args.json and not failures:
        print(dumps([{"path": str(c.path), "created": c.created, "changes": list(c.changes)} for c in changes]))
    elif not args.json:
        print_lock_changes(session.out, changes)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise UserError(cause="; ".join(f.cause for f in failures), fix="; ".join(f.fix for f in failures))
    return 0
