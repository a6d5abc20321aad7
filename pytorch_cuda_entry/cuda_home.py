"""Lay out a CUDA_HOME for torch.utils.cpp_extension from the nvidia-* wheels already in the venv.

The wheels spread one CUDA release over site-packages/nvidia/<component>/{bin,include,lib}
(CUDA 13: nvidia/cu13/...). Build tools expect one tree: $CUDA_HOME/bin/nvcc,
$CUDA_HOME/include, $CUDA_HOME/lib64. This makes that tree out of symbolic links, so
no byte of the toolkit is copied and no second toolkit is installed.
"""

from __future__ import annotations

import argparse
import re
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path

SKIP = frozenset({"__init__.py", "__pycache__"})
VERSIONED_SO = re.compile(r"^(lib.+\.so)\.\d+(\.\d+)*$")


def _link(source: Path, target: Path) -> None:
    """Link source at target; where two components share a directory name, merge them."""
    if not target.exists() and not target.is_symlink():
        target.symlink_to(source)
        return
    if target.is_symlink() and target.is_dir() and source.is_dir():
        previous = target.resolve()
        target.unlink()
        target.mkdir()
        for child in previous.iterdir():
            if child.name not in SKIP:
                _link(child, target / child.name)
    if target.is_dir() and not target.is_symlink() and source.is_dir():
        for child in source.iterdir():
            if child.name not in SKIP:
                _link(child, target / child.name)
    # the same file from two components: the first one stays


def make_cuda_home(nvidia: Path | list[Path], home: Path) -> dict[str, int]:
    """Fill ``home`` with links into ``nvidia`` (site-packages/nvidia; several: the first wins on a clash).
    Returns the number of entries per folder."""
    roots = nvidia if isinstance(nvidia, list) else [nvidia]
    for name in ("bin", "include", "lib64", "nvvm"):
        (home / name).mkdir(parents=True, exist_ok=True)
    components = [p for root in roots for p in sorted(root.iterdir()) if p.is_dir() and p.name not in SKIP]
    for component in components:
        for name, into in (("bin", "bin"), ("include", "include"), ("lib", "lib64"), ("nvvm", "nvvm")):
            source = component / name
            if source.is_dir():
                for child in sorted(source.iterdir()):
                    if child.name not in SKIP:
                        _link(child, home / into / child.name)
    # nvcc.profile runs $(TOP)/nvvm/bin/cicc, but the CUDA 13 nvidia-nvvm wheel puts cicc in bin/.
    cicc = home / "nvvm" / "bin" / "cicc"
    if (home / "bin" / "cicc").exists() and not cicc.exists():
        cicc.parent.mkdir(parents=True, exist_ok=True)
        cicc.symlink_to((home / "bin" / "cicc").resolve())
    lib64 = home / "lib64"
    for library in sorted(lib64.iterdir()):
        match = VERSIONED_SO.match(library.name)
        if match and not (lib64 / match.group(1)).exists():
            (lib64 / match.group(1)).symlink_to(library.name)  # libcudart.so for `-lcudart`
    return {name: len(list((home / name).iterdir())) for name in ("bin", "include", "lib64", "nvvm")}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("home", type=Path, help="the CUDA_HOME to create")
    parser.add_argument(
        "--nvidia",
        type=Path,
        action="append",
        help="a site-packages/nvidia folder (repeatable; default: this Python's)",
    )
    args = parser.parse_args(argv)
    roots: list[Path] = args.nvidia or [Path(sysconfig.get_paths()["purelib"]) / "nvidia"]
    missing = [str(root) for root in roots if not root.is_dir()]
    if missing:
        print(f"cuda_home: {', '.join(missing)} does not exist (no nvidia-* wheels there)", file=sys.stderr)
        return 2
    counts = make_cuda_home(roots, args.home)
    if not (args.home / "bin" / "nvcc").exists():
        where = ", ".join(f"{root}/*/bin" for root in roots)
        print(f"cuda_home: no nvcc under {where}; install the nvidia-cuda-nvcc wheel", file=sys.stderr)
        return 1
    print(f"cuda_home: {args.home} ({', '.join(f'{k}: {v} entries' for k, v in counts.items())})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
