"""`build.py bake`: the matrix as a docker buildx bake file (JSON), for those who build with their own buildx:
one bake target per variant (its rendered Dockerfile, tags, labels, linux/amd64), a child flavour FROM its
parent's bake target (a named context), and groups: default, all, one per matrix target and one per alias and
per matrix.yaml group (each: its targets' variants), so `docker buildx bake cu12` works. What bake builds has not
passed the in-image checks: `build.py build` is what gates the tags."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pytorch_cuda.bake.bake_file import bake_document
from pytorch_cuda.bake.set_overrides import check_platform
from pytorch_cuda.cli.options import Session, SharedOptions, ca_bundle_option, examples
from pytorch_cuda.cli.overrides import options


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "bake",
        parents=[shared.matrix, shared.common],
        help="print the matrix as a docker-bake.json for docker buildx bake",
        description="Print (or write with --file) a docker buildx bake definition in JSON: a target per variant "
        "(the rendered images/VARIANT/Dockerfile, its tags and labels, linux/amd64), each child flavour FROM its "
        "parent's target through a named context, the base image as BASE_IMAGE (the matrix's upstream), and the "
        "groups default, all, one per matrix target, alias and matrix.yaml group; the CA bundle (--ca-bundle, "
        "else $PIP_CERT, $SSL_CERT_FILE or $REQUESTS_CA_BUNDLE) as the pip_ca secret. `docker buildx bake -f "
        "docker-bake.json all` builds the matrix with your own buildx; the in-image checks that gate build.py's "
        "tags do not run there.",
        epilog=examples("bake", "bake --file docker-bake.json --target cu12", "bake --set '*.cache-to=type=inline'"),
    )
    verb.add_argument(
        "--target",
        action="append",
        metavar="NAME",
        help="these targets, aliases, groups or bake targets (a variant, e.g. cu128-runtime, with its parents; "
        "default: all)",
    )
    verb.add_argument("--file", type=Path, metavar="PATH", help="write the JSON there instead of stdout")
    options(verb, metadata=False)
    ca_bundle_option(verb)
    verb.set_defaults(run=bake)


def bake(args: argparse.Namespace, session: Session) -> int:
    check_platform(args.platform)
    document = bake_document(session.matrix(args), session.root(), args.target or ["all"], args.set, args.ca_bundle)
    text = json.dumps(document, indent=2) + "\n"
    if args.file:
        args.file.write_text(text, encoding="utf-8")
        session.err.print(f"wrote {args.file} ({len(document['target'])} targets)", highlight=False)
    else:
        print(text, end="")
    return 0
