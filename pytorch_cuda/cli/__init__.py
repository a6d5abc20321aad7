"""The command line of build.py (`python build.py --help`) and of the `pytorch-cuda-build` command."""

from pytorch_cuda.cli.main import console_script, main

__all__ = ["console_script", "main"]
