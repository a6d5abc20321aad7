"""Build the tiny CUDA extension with torch.utils.cpp_extension (nvcc + ninja), then run its kernel.

nvcc compiles without a GPU, so this proves a devel environment anywhere; the kernel runs
(and is checked against torch) only where a GPU is visible. Prints one line per step and
exits 0 on success. Set TORCH_CUDA_ARCH_LIST to choose the targets (default here: 8.0;9.0).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.utils import cpp_extension

HERE = Path(__file__).resolve().parent


def main() -> int:
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0")
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}), CUDA_HOME {cpp_extension.CUDA_HOME}")
    build_dir = Path(os.environ.get("EXTENSION_BUILD_DIR") or tempfile.mkdtemp(prefix="scale-add-"))
    build_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    module = cpp_extension.load(
        name="pytorch_cuda_scale_add",
        sources=[str(HERE / "scale_add.cpp"), str(HERE / "scale_add_kernel.cu")],
        build_directory=str(build_dir),
        verbose=False,
    )
    built = sorted(p.name for p in build_dir.iterdir() if p.suffix in (".so", ".o"))
    print(f"built in {time.monotonic() - started:.1f} s for {os.environ['TORCH_CUDA_ARCH_LIST']}: {', '.join(built)}")
    if not torch.cuda.is_available():
        print("no GPU visible: the extension built and imported; its kernel was not run")
        return 0
    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    out = module.scale_add(x, y, 2.5)
    torch.testing.assert_close(out, 2.5 * x + y)
    print(f"kernel ran on {torch.cuda.get_device_name()} and matches 2.5 * x + y over {x.numel()} elements")
    return 0


if __name__ == "__main__":
    sys.exit(main())
