"""The command line of build.py (`python build.py --help`)."""

from pytorch_cuda.cli.main import main

__all__ = ["main"]
