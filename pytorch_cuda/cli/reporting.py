"""`build.py report`: the precision support report of result files, or `--diff` of two runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.github_step import append_step_summary
from pytorch_cuda.console.output import dumps
from pytorch_cuda.errors import UserError


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
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
    report_verb.add_argument(
        "--summary", type=Path, metavar="FILE", help="also append report.md to FILE (a job summary)"
    )
    report_verb.add_argument(
        "--already-passed",
        type=Path,
        metavar="PASSED.json",
        help="with --summary: the results are those of an earlier run that passed (its passed.json); say so first",
    )
    report_verb.set_defaults(run=report)


def report(args: argparse.Namespace, session: Session) -> int:
    if args.diff:
        return report_diff(args, session)
    if args.html is not None:
        raise UserError(cause="report --html PATH is for --diff OLD NEW", fix="add --diff, or use --out DIR")
    if args.out is None:
        raise UserError(cause="report needs --out DIR", fix="add `--out report/` (or `--diff OLD NEW` to compare two)")
    if args.already_passed is not None and args.summary is None:
        raise UserError(cause="report --already-passed notes a job summary", fix="add --summary FILE, or leave it out")
    from pytorch_cuda.precision_report.report_files import write_report  # matplotlib loads only for `report`

    written = write_report(args.results, args.out)
    if args.summary is not None:
        from pytorch_cuda.precision_report.job_summary import job_summary

        append_step_summary(args.summary, job_summary(args.out / "report.md", args.already_passed))
    if args.json:
        print(dumps({"written": [str(p) for p in written]}))
    else:
        session.out.print("\n".join(f"wrote {p}" for p in written), highlight=False)
    return 0


def report_diff(args: argparse.Namespace, session: Session) -> int:
    from pytorch_cuda.precision_report.baseline_choice import diff_pair
    from pytorch_cuda.precision_report.diff import diff_results
    from pytorch_cuda.precision_report.diff_markdown import render_diff_markdown

    old, new, baseline = diff_pair(args.results, args.baseline_store)
    session.err.print(baseline, highlight=False, markup=False)
    diff = diff_results(old, new)
    text = render_diff_markdown(diff, args.html_url)
    verdict = None
    if args.baseline_store is not None:  # the history's verdict, the same model as `results judge`
        from pytorch_cuda.decay.candidate import judge_candidate

        verdict = judge_candidate(args.baseline_store, args.results[-1])
        text = text.rstrip("\n") + "\n\n" + "\n".join(verdict.lines())
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
        if verdict is not None:
            facts["history_regressions"] = [f.metric for f in verdict.regressions]
            facts["no_history"] = verdict.no_history
        print(dumps({**facts, "markdown": text, **html}))
    elif args.out is None:
        print(text)
    else:
        session.out.print(f"wrote {args.out / 'diff.md'} ({diff.regressions} regression(s) beyond noise)")
    return 0


def _write(path: Path, text: str, option: str) -> None:
    from pytorch_cuda.precision_report.report_files import ReportInputError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ReportInputError(f"cannot write {path} ({error.strerror})", f"pass a writable {option}") from None
