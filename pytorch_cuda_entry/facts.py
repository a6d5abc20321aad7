"""The environment as plain data: what the probes found, and what the report and banner show."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pytorch_cuda_contract.gpu import GpuDevice


@dataclass(frozen=True)
class ImageFacts:
    """From the build manifest: what the image was built as and for."""

    target: str | None = None
    flavour: str | None = None
    cuda: str | None = None
    min_driver: str | None = None
    compat_driver: str | None = None


@dataclass(frozen=True)
class Environment:
    torch: str | None
    cuda: str | None
    cudnn: str | None
    nccl: str | None
    python: str
    gpus: tuple[GpuDevice, ...]
    gpu_problem: str | None  # why no GPU list could be read (NVML error), None when it could
    driver: str | None
    shm_bytes: int | None
    image: ImageFacts = field(default_factory=ImageFacts)
    cuda_home: str | None = None
    nvcc: str | None = None
    settings: tuple[tuple[str, str], ...] = ()  # the known-problem variables set, as (name, value)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["gpus"] = [
            {"index": gpu.index, "name": gpu.name, "capability": list(gpu.capability), "memory_bytes": gpu.memory_bytes,
             "cc": gpu.cc, "native_bf16": gpu.native("bf16")}
            for gpu in self.gpus
        ]  # fmt: skip
        return data
