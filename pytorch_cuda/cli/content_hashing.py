"""`build.py content-hash IMAGE`: the content hash a GPU result is keyed on."""

from __future__ import annotations

import argparse

from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.console.output import dumps
from pytorch_cuda.image_build.content_hash import hash_image


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    hashing = verbs.add_parser(
        "content-hash",
        parents=[shared.common],
        help="print the content hash a GPU result is keyed on",
        description="Print the sha256 of a local image's layers, run config and conformance/ files: the key under "
        "which GPU results of that content are kept, whatever its tag or build date.",
        epilog=examples("content-hash pytorch-cuda:v2.9"),
    )
    hashing.add_argument("image", metavar="IMAGE", help="a local image: its layers, run config and conformance/")
    hashing.set_defaults(run=run_content_hash)


def run_content_hash(args: argparse.Namespace, session: Session) -> int:
    found = hash_image(args.image, session.root() / "conformance")
    print(dumps(found) if args.json else found["content_hash"])
    return 0
