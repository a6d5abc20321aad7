"""The banner an interactive start prints (in the spirit of NGC's), composed from the facts."""

from __future__ import annotations

import sys

from pytorch_cuda_entry.environment_warnings import Advice, warnings
from pytorch_cuda_entry.facts import Environment

RULE = "=" * 72


def _gib(count: int) -> str:
    return f"{count / 2**30:.1f} GiB"


def gpu_lines(env: Environment) -> list[str]:
    if not env.gpus:
        return ["GPUs:    none visible"]
    lines = []
    for gpu in env.gpus:
        bf16 = "yes" if gpu.native("bf16") else "no (emulated; use fp16 + GradScaler)"
        lines.append(f"GPU {gpu.index}:   {gpu.name}, cc {gpu.cc}, {_gib(gpu.memory_bytes)}, native bf16: {bf16}")
    return lines


def compose(env: Environment, found: list[Advice] | None = None) -> str:
    found = warnings(env) if found is None else found
    flavour = f" ({env.image.target}-{env.image.flavour})" if env.image.flavour else ""
    lines = [
        RULE,
        f"pytorch-cuda{flavour}",
        f"PyTorch {env.torch or '?'}  CUDA {env.cuda or '-'}  cuDNN {env.cudnn or '-'}  NCCL {env.nccl or '-'}  "
        f"Python {env.python}",
    ]
    if env.driver:
        lines.append(f"Driver:  {env.driver}")
    lines += gpu_lines(env)
    if env.nvcc:
        lines.append(f"nvcc:    {env.nvcc}" + (f" (CUDA_HOME={env.cuda_home})" if env.cuda_home else ""))
    lines += [
        "",
        "Check this image on this host:  conformance          (GPU; `conformance -m cpu` without one)",
        "Environment report for a bug:   pytorch-cuda-info    (--json for machines)",
    ]
    if found:
        lines.append("")
        lines += [warning.line() for warning in found]
    lines.append(RULE)
    return "\n".join(lines) + "\n"


def main() -> int:
    """Print the banner to stderr. The entry script calls this only on an interactive start."""
    from pytorch_cuda_entry.environment import probe_environment

    sys.stderr.write(compose(probe_environment()))
    sys.stderr.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
