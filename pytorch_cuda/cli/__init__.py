"""The command line of build.py (`python build.py --help`) and of the `pytorch-cuda-build` command."""

from pytorch_cuda.cli.main import main


def console_script() -> int:
    """`pytorch-cuda-build`: build.py's verbs on the repository found from the working directory (or --root)."""
    return main(prog="pytorch-cuda-build")


__all__ = ["console_script", "main"]
