"""`build.py ci-matrix`: the CI job matrix (JSON) the workflows read: a build per variant, a GPU job per runner."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytorch_cuda.ci_jobs import github_matrix
from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.github_step import append_step_summary, write_step_outputs
from pytorch_cuda.console.output import dumps
from pytorch_cuda.matrix.fleet import load_fleet


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    both = [shared.matrix, shared.common]
    # `matrix`, its name before 2026-12, stays as an alias: the build matrix is matrix.yaml, this is CI's job matrix
    jobs = verbs.add_parser(
        "ci-matrix",
        aliases=["matrix"],
        parents=both,
        help="print the CI job matrix (JSON): a build per variant, a GPU job per runner",
        description="Print the CI job matrix as JSON, for a workflow's strategy.matrix: one build job per variant of "
        "matrix.yaml, and one GPU job per variant and GPU runner of fleet.yaml.",
        epilog=examples("matrix", "matrix --fleet fleet.yaml"),
    )
    jobs.add_argument("--fleet", type=Path, metavar="PATH", help="GPU runner file (default: ROOT/fleet.yaml)")
    jobs.add_argument(
        "--github-output", type=Path, metavar="FILE", help="also append the `build` and `gpu` step outputs to FILE"
    )
    jobs.add_argument("--summary", type=Path, metavar="FILE", help="also append the list of jobs (Markdown) to FILE")
    jobs.set_defaults(run=job_matrix)


def job_matrix(args: argparse.Namespace, session: Session) -> int:
    """Always JSON: it is what `strategy.matrix: ${{ fromJSON(...) }}` reads."""
    matrix, root = session.matrix(args), session.root()
    jobs = github_matrix(matrix, load_fleet(args.fleet or root / "fleet.yaml"), root)
    if args.github_output is not None:
        write_step_outputs(args.github_output, jobs.step_outputs())
    if args.summary is not None:
        append_step_summary(args.summary, jobs.summary())
    print(dumps(jobs.as_dict()))
    return 0
