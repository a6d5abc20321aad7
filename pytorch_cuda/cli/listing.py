"""`build.py list`: the targets, aliases, pins and tags of matrix.yaml."""

from __future__ import annotations

import argparse

from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.output import dumps, matrix_rows, print_matrix


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    both = [shared.matrix, shared.common]
    verbs.add_parser(
        "list",
        parents=both,
        help="list targets, aliases, pins and tags",
        description="List matrix.yaml's targets: each one's aliases, flavour, pinned torch, CUDA, cuDNN, NCCL, Triton "
        "and Python, its package index, and the tags a build moves. Reads the matrix only (no engine, no network).",
        epilog=examples("list", "list --json", "list --matrix other/matrix.yaml"),
    ).set_defaults(run=list_matrix)


def list_matrix(args: argparse.Namespace, session: Session) -> int:
    matrix = session.matrix(args)
    if args.json:
        print(dumps(matrix_rows(matrix)))
    else:
        print_matrix(session.out, matrix)
    return 0
