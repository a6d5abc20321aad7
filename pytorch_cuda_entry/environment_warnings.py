"""Warnings about the environment, each with its fix. Pure functions of the facts."""

from __future__ import annotations

from dataclasses import dataclass

from pytorch_cuda_contract.driver import DriverRequirement, judge_driver, requirement_for_cuda
from pytorch_cuda_contract.known_settings import setting_problems
from pytorch_cuda_contract.shared_memory import MIN_SHM_BYTES, SHM_FIX
from pytorch_cuda_entry.facts import Environment

NO_GPU_FIX = "pass --gpus all, or install the NVIDIA Container Toolkit"
FORWARD_COMPAT_NOTE = (
    "on data-center GPUs, CUDA forward compatibility (the cuda-compat package of this CUDA release on the host) "
    "also lets an older driver run it"
)


@dataclass(frozen=True)
class Advice:
    problem: str
    fix: str

    def line(self) -> str:
        return f"WARNING: {self.problem}. Fix: {self.fix}."


def _driver_requirement(env: Environment) -> DriverRequirement | None:
    image = env.image
    if image.min_driver and image.compat_driver:
        return DriverRequirement(image.min_driver, image.compat_driver, "the image's manifest")
    cuda = image.cuda or env.cuda
    return requirement_for_cuda(cuda) if cuda else None


def driver_warning(env: Environment) -> Advice | None:
    cuda = env.image.cuda or env.cuda
    requirement = _driver_requirement(env)
    if env.driver is None or cuda is None or requirement is None:
        return None
    verdict = judge_driver(env.driver, cuda, requirement)
    if verdict.status != "too_old":
        return None
    return Advice(
        problem=f"the NVIDIA driver {env.driver} is too old for this image's CUDA {cuda}: it needs at least "
        f"{requirement.min_driver} (or {requirement.compat_driver} under minor-version compatibility)",
        fix=f"upgrade the host's driver to {requirement.min_driver} or newer; {FORWARD_COMPAT_NOTE}",
    )


def warnings(env: Environment) -> list[Advice]:
    found: list[Advice] = []
    if not env.gpus:
        why = f" ({env.gpu_problem})" if env.gpu_problem else ""
        found.append(Advice(f"no GPU is visible in this container{why}", NO_GPU_FIX))
    if env.shm_bytes is not None and env.shm_bytes < MIN_SHM_BYTES:
        found.append(
            Advice(
                f"/dev/shm is {env.shm_bytes / 2**20:.0f} MiB, under 1 GiB: DataLoader workers and NCCL run out of "
                "shared memory",
                SHM_FIX,
            )
        )
    driver = driver_warning(env)
    if driver is not None:
        found.append(driver)
    for known in setting_problems(dict(env.settings), env.nccl):
        found.append(Advice(known.cause(), known.fix))
    return found
