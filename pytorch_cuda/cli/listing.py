"""`build.py list`: the targets, aliases, pins and tags of matrix.yaml."""

from __future__ import annotations

import argparse

from pytorch_cuda.cli.options import Session, SharedOptions
from pytorch_cuda.console.output import dumps, matrix_rows, print_matrix


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    both = [shared.matrix, shared.common]
    verbs.add_parser("list", parents=both, help="list targets, aliases, pins and tags").set_defaults(run=list_matrix)


def list_matrix(args: argparse.Namespace, session: Session) -> int:
    matrix = session.matrix(args)
    if args.json:
        print(dumps(matrix_rows(matrix)))
    else:
        print_matrix(session.out, matrix)
    return 0
