#!/usr/bin/env python3
"""pytorch-cuda: build, check and tag PyTorch + CUDA images. See `python build.py --help`."""

import sys

from pytorch_cuda.cli import main

if __name__ == "__main__":
    sys.exit(main())
