"""The options of `build`, `push` and `bake` beside the matrix: `--set PATTERN.KEY=VALUE` (bake's overrides) and
`--platform`; what they mean is pytorch_cuda/bake/set_overrides.py's."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytorch_cuda.bake.set_overrides import PLATFORM


def options(parser: argparse.ArgumentParser, *, metadata: bool = True) -> None:
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATTERN.KEY=VALUE",
        help="override for the bake targets PATTERN names (a variant, or a glob over them: '*', 'cu128-*'; not a "
        "group or alias, as in buildx), as bake's --set: labels.NAME=V, no-cache=true (bake also: args.NAME[=V], "
        "contexts.NAME=V, context, dockerfile, target, shm-size, pull, push, platform, and the lists tags, "
        "cache-from, cache-to, output, secrets, attest: each value whole; repeated: appended; KEY+=V appends to "
        "the file's)",
    )
    parser.add_argument(
        "--platform",
        default=PLATFORM,
        metavar="OS/ARCH",
        help=f"the image's platform; only {PLATFORM}: the locks resolve manylinux_2_28 x86_64 wheels",
    )
    if metadata:
        parser.add_argument(
            "--metadata-file",
            type=Path,
            metavar="PATH",
            help="write what was built as JSON, buildx's keys (containerimage.digest, containerimage.config.digest, "
            "image.name); one --target: buildx build's object; several (or a group): keyed by target, as bake",
        )
