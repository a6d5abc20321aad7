"""The build manifest baked into every image at /etc/pytorch-cuda/manifest.json.

It holds every pin of the variant. The builder fills the contract's :class:`Manifest` (the same class the
conformance suite reads the file back into) and writes it through :meth:`Manifest.as_text`.
"""

from __future__ import annotations

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.variants import Variant
from pytorch_cuda_contract import paths
from pytorch_cuda_contract.base_record import BaseSection
from pytorch_cuda_contract.manifest import MANIFEST_SCHEMA, Manifest, Pins

MANIFEST_PATH = paths.MANIFEST_PATH
VENV_PATH = paths.VENV_PATH


def wheel_names(variant: Variant) -> dict[str, str]:
    """The CUDA libraries' wheel names on the variant's index."""
    family = variant.target.wheel_family
    return {
        "cudnn": f"nvidia-cudnn-{family}",
        "nccl": f"nvidia-nccl-{family}",
        "cublas": f"nvidia-cublas-{family}" if family == "cu12" else "nvidia-cublas",
    }


def build_manifest(matrix: Matrix, variant: Variant) -> Manifest:
    target = variant.target
    return Manifest(
        schema=MANIFEST_SCHEMA,
        project=matrix.project.name,
        target=variant.target_name,
        flavour=variant.flavour_name,
        python=variant.base.python,
        venv=VENV_PATH,
        pins=Pins(
            torch=variant.torch_version, cuda=target.cuda, cudnn=target.cudnn, nccl=target.nccl, triton=target.triton
        ),
        wheels=wheel_names(variant),
        min_driver=target.min_driver,
        cuda_compat_driver=target.compat_driver,
        base=BaseSection(
            image=variant.base.image,
            upstream=variant.base.upstream,
            bootstrap=variant.base.bootstrap.model_dump(mode="json"),
            record=paths.BASE_RECORD_PATH,
        ),
    )


def manifest_json(matrix: Matrix, variant: Variant) -> str:
    return build_manifest(matrix, variant).as_text()


def requirements_txt(matrix: Matrix, variant: Variant) -> str:
    """Exact pins for pip: torch and the CUDA wheels it must resolve to, plus the suite's tools."""
    wheels = wheel_names(variant)
    # On an index other than PyPI the pin carries the local version (2.9.1+cu130): PyPI's plain
    # 2.9.1 cannot satisfy it, whatever index a resolver might consult.
    on_pypi = str(variant.target.index).rstrip("/") == "https://pypi.org/simple"
    lines = [
        "# Generated from matrix.yaml by `python build.py render`. Do not edit; `build.py lock` resolves it",
        f"# into requirements.lock, from {str(variant.target.index).rstrip('/')} alone.",
        f"torch=={variant.target.torch if on_pypi else variant.torch_version}",
        f"triton=={variant.target.triton}",
        f"{wheels['cudnn']}=={variant.target.cudnn}",
        f"{wheels['nccl']}=={variant.target.nccl}",
        *(f"{name}=={version}" for name, version in sorted(matrix.python_packages.items())),
    ]
    return "\n".join(lines) + "\n"
