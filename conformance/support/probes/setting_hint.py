"""The cause a failure names when this process runs under a setting the contract's table says breaks this stack."""

from __future__ import annotations

import os

import torch

from pytorch_cuda_contract.known_settings import setting_problems
from pytorch_cuda_contract.versions import nccl_version_string


def _nccl() -> str | None:
    try:
        return nccl_version_string(torch.cuda.nccl.version())
    except (AttributeError, RuntimeError):
        return None


def known_setting_hint() -> str:
    """ "" when no known problem applies, else a paragraph (starting on a new line) per problem, with its fix."""
    return "".join(f"\n{problem.hint()}" for problem in setting_problems(os.environ, _nccl()))
