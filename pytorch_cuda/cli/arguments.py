"""The command line's arguments, help text and exit statuses."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytorch_cuda import __version__
from pytorch_cuda.console.progress import PROGRESS_MODES

ROOT = Path(__file__).resolve().parent.parent.parent

EPILOG = """\
examples:
  python build.py --target cu12              build, check and tag pytorch-cuda:v2.9
  python build.py --target cu12 --dry-run    show the plan; run nothing
  python build.py --target cu12 --flavour devel
                                             build the runtime, then devel FROM it
  python build.py --target cu12 --push --registry 127.0.0.1:5000/ci
                                             build, check, tag, then push the full tag and the aliases
  python build.py --list                     targets, aliases, pins and tags
  python build.py --render                   render templates/ into images/
  python build.py --check-render             fail (exit 1) when images/ or a lock is stale
  python build.py --lock --target cu12       re-resolve images/cu128-runtime/requirements.lock; print what changed
  python build.py --report results.json --out report/
                                             precision report (report.html, .md, .json)
  python build.py --github-matrix            the CI jobs (JSON): a build per variant, a GPU job per variant x runner
  python build.py --content-hash IMAGE       sha256 of IMAGE's layers and run config and conformance/'s files
  python build.py --check-tag v2.9.1         exit 2 unless the release tag names matrix.yaml's torch

exit status: 0 success; 1 stale images/ or lock (--check-render), or failed in-image checks;
2 bad input or environment (matrix, target, engine, disk, index, download, missing lock, a build of
the same variant already running, a failed push); 130 interrupted (Ctrl-C: no tag moved; during a
push, the message names every remote tag and where it was left).
"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="build.py",
        description="Build PyTorch 2.9 + CUDA images from matrix.yaml on a Docker engine with BuildKit, run the "
        "conformance suite's CPU checks inside each candidate, and only then move its tags.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    action = p.add_mutually_exclusive_group()
    action.add_argument("--target", metavar="NAME", help="target to build: a name or alias from --list (e.g. cu12)")
    action.add_argument("--list", action="store_true", help="list targets, aliases, pins and tags")
    action.add_argument("--render", action="store_true", help="render templates/ into images/")
    action.add_argument(
        "--check-render",
        action="store_true",
        help="exit 1 when images/ differs from the templates, or a lock from its requirements",
    )
    action.add_argument(
        "--report",
        nargs="+",
        type=Path,
        metavar="RESULTS.json",
        help="write the precision support report of one or more conformance result files into --out; a "
        "precision-check report (precision-check --json) among them gets its own page, precision-check-NAME.html",
    )
    action.add_argument(
        "--github-matrix", action="store_true", help="print the CI job matrix (JSON) of matrix.yaml and --fleet"
    )
    action.add_argument("--content-hash", metavar="IMAGE", help="print the content hash a GPU result is keyed on")
    action.add_argument("--check-tag", metavar="TAG", help="exit 2 unless release tag TAG names matrix.yaml's torch")
    p.add_argument("--fleet", type=Path, default=ROOT / "fleet.yaml", metavar="PATH", help="GPU runner file")
    p.add_argument("--out", type=Path, metavar="DIR", help="where --report writes report.html, report.md, report.json")
    p.add_argument(
        "--lock",
        action="store_true",
        help="resolve requirements.txt into the hash-locked requirements.lock (of --target, else of every "
        "variant) with uv, and print what changed",
    )
    p.add_argument("--flavour", metavar="NAME", help="image flavour (default: the matrix's default, runtime)")
    p.add_argument("--dry-run", action="store_true", help="print the build plan and run nothing")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout (progress on stderr)")
    p.add_argument(
        "--ca-bundle",
        type=Path,
        metavar="PATH",
        help="CA bundle for pip and uv (default: $PIP_CERT, "
        "$SSL_CERT_FILE or $REQUESTS_CA_BUNDLE); passed as a BuildKit secret, never stored in the image",
    )
    p.add_argument("--skip-checks", action="store_true", help="tag without running the in-image checks (not advised)")
    p.add_argument(
        "--recheck",
        action="store_true",
        help="rerun the in-image checks even when this image ID already passed them with this suite",
    )
    p.add_argument(
        "--push",
        action="store_true",
        help="after the local tags, push the image to --registry: the immutable full tag first, the moving aliases "
        "last, all or none; prints each digest",
    )
    p.add_argument(
        "--push-candidate",
        action="store_true",
        help="with --push: push only the candidate tag (candidate-<variant>-<build id>) and print its digest; no "
        "release tag moves in the registry (nightly and release test that digest on GPUs first)",
    )
    p.add_argument(
        "--registry",
        metavar="HOST[/NAMESPACE]",
        help="where --push sends the tags, e.g. 127.0.0.1:5000/ci (-> 127.0.0.1:5000/ci/pytorch-cuda:v2.9); with a "
        "buildx docker-container builder the BuildKit cache goes there too",
    )
    p.add_argument("--no-cache", action="store_true", help="build every step again, ignoring the build cache")
    p.add_argument(
        "--progress",
        choices=PROGRESS_MODES,
        default="auto",
        help="build progress on stderr: auto (steps and notable lines), plain (the whole build log), tty (auto, "
        "coloured), quiet (none)",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s (pytorch-cuda) {__version__}")
    p.add_argument("--matrix", type=Path, default=ROOT / "matrix.yaml", metavar="PATH", help="matrix file")
    p.add_argument("--log-dir", type=Path, default=ROOT / "build-output", metavar="DIR", help="where build logs go")
    return p
