"""The verbs the CI workflows call: `matrix` (the job matrix), `content-hash IMAGE` and `check-tag TAG`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytorch_cuda.build.content_hash import hash_image
from pytorch_cuda.ci_jobs import github_matrix
from pytorch_cuda.cli.options import Session, SharedOptions
from pytorch_cuda.console.output import dumps
from pytorch_cuda.matrix.fleet import load_fleet
from pytorch_cuda.release.tag_check import check_release_tag


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    both = [shared.matrix, shared.common]
    # `matrix`, its name before 2026-12, stays as an alias: the build matrix is matrix.yaml, this is CI's job matrix
    jobs = verbs.add_parser(
        "ci-matrix",
        aliases=["matrix"],
        parents=both,
        help="print the CI job matrix (JSON): a build per variant, a GPU job per runner",
    )
    jobs.add_argument("--fleet", type=Path, metavar="PATH", help="GPU runner file (default: ROOT/fleet.yaml)")
    jobs.set_defaults(run=job_matrix)
    hashing = verbs.add_parser(
        "content-hash", parents=[shared.common], help="print the content hash a GPU result is keyed on"
    )
    hashing.add_argument("image", metavar="IMAGE", help="a local image: its layers, run config and conformance/")
    hashing.set_defaults(run=run_content_hash)
    tag = verbs.add_parser("check-tag", parents=both, help="exit 2 unless release tag TAG names matrix.yaml's torch")
    tag.add_argument("tag", metavar="TAG", help="a release tag, e.g. v2.9.1")
    tag.set_defaults(run=check_tag)


def run_content_hash(args: argparse.Namespace, session: Session) -> int:
    found = hash_image(args.image, session.root() / "conformance")
    print(dumps(found) if args.json else found["content_hash"])
    return 0


def job_matrix(args: argparse.Namespace, session: Session) -> int:
    """Always JSON: it is what `strategy.matrix: ${{ fromJSON(...) }}` reads."""
    matrix, root = session.matrix(args), session.root()
    print(dumps(github_matrix(matrix, load_fleet(args.fleet or root / "fleet.yaml"), root).as_dict()))
    return 0


def check_tag(args: argparse.Namespace, session: Session) -> int:
    tag = check_release_tag(session.matrix(args), args.tag)
    if args.json:
        print(dumps(tag.as_dict()))
    else:
        session.out.print(f"release tag {tag.tag} matches matrix.yaml: torch {tag.torch}", highlight=False)
    return 0
