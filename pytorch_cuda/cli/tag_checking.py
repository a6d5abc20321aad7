"""`build.py check-tag TAG`: exit 2 unless the release tag names matrix.yaml's torch."""

from __future__ import annotations

import argparse

from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.output import dumps
from pytorch_cuda.release.tag_check import check_release_tag


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    both = [shared.matrix, shared.common]
    tag = verbs.add_parser(
        "check-tag",
        parents=both,
        help="exit 2 unless release tag TAG names matrix.yaml's torch",
        description="Exit 0 when the release tag TAG names the torch version matrix.yaml pins (v2.9.1 for torch "
        "2.9.1), 2 with one paragraph otherwise: the release workflow's first step.",
        epilog=examples("check-tag v2.9.1"),
    )
    tag.add_argument("tag", metavar="TAG", help="a release tag, e.g. v2.9.1")
    tag.set_defaults(run=check_tag)


def check_tag(args: argparse.Namespace, session: Session) -> int:
    tag = check_release_tag(session.matrix(args), args.tag)
    if args.json:
        print(dumps(tag.as_dict()))
    else:
        session.out.print(f"release tag {tag.tag} matches matrix.yaml: torch {tag.torch}", highlight=False)
    return 0
