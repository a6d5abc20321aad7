"""Find the repository a command works on: --root, else the first folder upward with matrix.yaml and templates/."""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda.errors import UserError


def is_repository(folder: Path) -> bool:
    return (folder / "matrix.yaml").is_file() and (folder / "templates").is_dir()


def find_root(flag: Path | None, start: Path) -> Path:
    """The repository root: the --root flag's folder, else `start` or the nearest folder above it that is one."""
    if flag is not None:
        if not is_repository(flag):
            raise UserError(
                cause=f"--root {flag} is not a pytorch-cuda repository (it has no matrix.yaml and templates/)",
                fix="pass the folder of a checkout (the one with matrix.yaml), e.g. `--root ~/pytorch-cuda`",
            )
        return flag.resolve()
    start = start.resolve()
    for folder in (start, *start.parents):
        if is_repository(folder):
            return folder
    raise UserError(
        cause=f"{start} is not inside a pytorch-cuda repository (no folder from it upward has matrix.yaml and "
        "templates/)",
        fix="run the command from inside a checkout, or pass `--root DIR` (the folder with matrix.yaml)",
    )
