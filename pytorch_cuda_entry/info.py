"""`pytorch-cuda-info`: the environment report a user pastes into a bug report (text or --json)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pytorch_cuda_entry.banner import gpu_lines
from pytorch_cuda_entry.environment_warnings import warnings
from pytorch_cuda_entry.facts import Environment


def report_dict(env: Environment) -> dict[str, object]:
    return {
        **env.as_json(),
        "warnings": [{"problem": w.problem, "fix": w.fix} for w in warnings(env)],
    }


def report_text(env: Environment) -> str:
    image = env.image
    shm = f"{env.shm_bytes / 2**20:.0f} MiB" if env.shm_bytes is not None else "missing"
    described = (
        f"{image.target}-{image.flavour} (CUDA {image.cuda}, driver >= {image.min_driver}, >= "
        f"{image.compat_driver} with minor-version compatibility)"
        if image.target
        else "no build manifest (not a pytorch-cuda image, or $PYTORCH_CUDA_MANIFEST points nowhere)"
    )
    lines = [
        f"image:      {described}",
        f"torch:      {env.torch or '-'}",
        f"CUDA:       {env.cuda or '-'}",
        f"cuDNN:      {env.cudnn or '-'}",
        f"NCCL:       {env.nccl or '-'}",
        f"Python:     {env.python}",
        f"driver:     {env.driver or '-'}",
        f"/dev/shm:   {shm}",
        f"CUDA_HOME:  {env.cuda_home or '-'}",
        f"nvcc:       {env.nvcc or '-'}",
        *gpu_lines(env),
    ]
    if env.gpu_problem:
        lines.append(f"GPU probe:  {env.gpu_problem}")
    lines += [w.line() for w in warnings(env)]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pytorch-cuda-info",
        description="Print this environment (torch, CUDA, cuDNN, NCCL, driver, GPUs, /dev/shm) for a bug report.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    from pytorch_cuda_entry.environment import probe_environment

    env = probe_environment()
    if args.json:
        sys.stdout.write(json.dumps(report_dict(env), indent=2) + "\n")
    else:
        sys.stdout.write(report_text(env))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
