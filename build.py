#!/usr/bin/env python3
"""pytorch-cuda: build, check and tag PyTorch + CUDA images. See `python build.py --help`."""

import sys
from pathlib import Path

from pytorch_cuda.cli import main

if __name__ == "__main__":
    sys.exit(main(start=Path(__file__).resolve().parent))
