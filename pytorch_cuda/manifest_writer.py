"""The build manifest baked into every image at /etc/pytorch-cuda/manifest.json.

It holds every pin of the variant. The conformance suite reads it and checks
the image against it; its format is the contract documented in conformance/README.md.
"""

from __future__ import annotations

import json
from typing import Any

from pytorch_cuda.matrix import Matrix
from pytorch_cuda.variants import Variant
from pytorch_cuda_contract import paths as contract
from pytorch_cuda_contract.base_record import BaseSection

MANIFEST_SCHEMA = 1
MANIFEST_PATH = contract.MANIFEST_PATH
VENV_PATH = contract.VENV_PATH


def build_manifest(matrix: Matrix, variant: Variant) -> dict[str, Any]:
    family = variant.target.wheel_family
    return {
        "schema": MANIFEST_SCHEMA,
        "project": matrix.project.name,
        "target": variant.target_name,
        "flavour": variant.flavour_name,
        "python": variant.base.python,
        "venv": VENV_PATH,
        "pins": {
            "torch": variant.torch_version,
            "cuda": variant.target.cuda,
            "cudnn": variant.target.cudnn,
            "nccl": variant.target.nccl,
            "triton": variant.target.triton,
        },
        "wheels": {
            "cudnn": f"nvidia-cudnn-{family}",
            "nccl": f"nvidia-nccl-{family}",
            "cublas": f"nvidia-cublas-{family}" if family == "cu12" else "nvidia-cublas",
        },
        "min_driver": variant.target.min_driver,
        "cuda_compat_driver": variant.target.compat_driver,
        "base": BaseSection(
            image=variant.base.image,
            upstream=variant.base.upstream,
            bootstrap=variant.base.bootstrap.model_dump(mode="json"),
            record=contract.BASE_RECORD_PATH,
        ).as_json(),
    }


def manifest_json(matrix: Matrix, variant: Variant) -> str:
    return json.dumps(build_manifest(matrix, variant), indent=2, sort_keys=False) + "\n"


def requirements_txt(matrix: Matrix, variant: Variant) -> str:
    """Exact pins for pip: torch and the CUDA wheels it must resolve to, plus the suite's tools."""
    manifest = build_manifest(matrix, variant)
    # On an index other than PyPI the pin carries the local version (2.9.1+cu130): PyPI's plain
    # 2.9.1 cannot satisfy it, whatever index a resolver might consult.
    on_pypi = str(variant.target.index).rstrip("/") == "https://pypi.org/simple"
    lines = [
        "# Generated from matrix.yaml by `python build.py --render`. Do not edit; `build.py --lock` resolves it",
        f"# into requirements.lock, from {str(variant.target.index).rstrip('/')} alone.",
        f"torch=={variant.target.torch if on_pypi else variant.torch_version}",
        f"triton=={variant.target.triton}",
        f"{manifest['wheels']['cudnn']}=={variant.target.cudnn}",
        f"{manifest['wheels']['nccl']}=={variant.target.nccl}",
        *(f"{name}=={version}" for name, version in sorted(matrix.python_packages.items())),
    ]
    return "\n".join(lines) + "\n"
