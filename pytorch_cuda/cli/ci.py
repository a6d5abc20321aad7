"""The commands the CI workflows call: --github-matrix, --content-hash IMAGE, --check-tag TAG."""

from __future__ import annotations

import argparse

from rich.console import Console

from pytorch_cuda.ci_matrix import github_matrix
from pytorch_cuda.cli.arguments import ROOT
from pytorch_cuda.console.output import dumps
from pytorch_cuda.content_hash import hash_image
from pytorch_cuda.fleet import load_fleet
from pytorch_cuda.matrix import load_matrix
from pytorch_cuda.release_tag import check_release_tag


def asked(args: argparse.Namespace) -> bool:
    return bool(args.github_matrix or args.content_hash or args.check_tag)


def run(args: argparse.Namespace, out: Console) -> int:
    if args.content_hash:
        found = hash_image(args.content_hash, ROOT / "conformance")
        print(dumps(found) if args.json else found["content_hash"])
        return 0
    matrix = load_matrix(args.matrix)
    if args.github_matrix:  # always JSON: it is what `strategy.matrix: ${{ fromJSON(...) }}` reads
        print(dumps(github_matrix(matrix, load_fleet(args.fleet), ROOT).as_dict()))
        return 0
    tag = check_release_tag(matrix, args.check_tag)
    if args.json:
        print(dumps(tag.as_dict()))
    else:
        out.print(f"release tag {tag.tag} matches matrix.yaml: torch {tag.torch}", highlight=False)
    return 0
