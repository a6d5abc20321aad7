"""The catalogue: every fault the suite must catch, every legitimate setup it must let pass.

A fault names the real failure it models, how it is injected, the checks it must trip (`trips`) and the `-k`
selection it runs with (its targets, so that a run stays short). `where="image"` marks the faults injected as broken
image variants by the Docker integration tier (tests/integration/test_broken_variants.py), which this harness does not
run: they are listed so that the checks a bare GPU host cannot reach (pins, the base record) still name their fault.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from fault_coverage.image_variants import IMAGE_FAULTS
from fault_coverage.model import Case, Injection


def env(**values: str) -> Injection:
    return Injection(env=MappingProxyType(values))


def patch(name: str) -> Injection:
    return Injection(patch=name)


def expecting(**fields: str) -> Injection:
    """The host's expectations file with these fields changed (`pins__torch` stands for `pins.torch`)."""
    return Injection(expectations=MappingProxyType({k.replace("__", "."): v for k, v in fields.items()}))


CONTROLS: Final = (
    Case("untouched", "control", "the suite as a user runs it, nothing changed", Injection()),
    Case(
        "caching-allocator-off", "control",
        "PyTorch's caching allocator off (a debugging setting): statistics and CUDA graphs are missing",
        env(PYTORCH_NO_CUDA_MEMORY_CACHING="1"), markers="gpu",
        skips=(("test_amp_memory_saving", "PYTORCH_NO_CUDA_MEMORY_CACHING"),
               ("test_compiled_matches_eager_and_is_timed[max_autotune_cnn]", "PYTORCH_NO_CUDA_MEMORY_CACHING")),
    ),
    Case("module-loading-eager", "control", "CUDA loads every kernel module at start (CUDA_MODULE_LOADING=EAGER)",
         env(CUDA_MODULE_LOADING="EAGER")),
    Case("any-uid", "control", "an arbitrary uid with no home and no passwd entry (OpenShift, `--user 12345:12345`)",
         Injection(uid=12345)),
)  # fmt: skip

FAULTS: Final = (
    Case(
        "tf32-forced-env", "fault", "TF32 forced into cuBLAS from outside torch (NVIDIA_TF32_OVERRIDE=1)",
        env(NVIDIA_TF32_OVERRIDE="1"),
        trips=("test_fp32_highest_is_not_faster_than_ieee", "test_gemm_ratio_to_fp32[fp16]",
               "test_gemm_ratio_to_fp32[bf16]", "test_gemm_ratio_to_fp32[tf32]", "test_gemm_throughput[fp32]",
               "test_fp32_ieee_and_tf32_error_bands", "test_sdpa_throughput_default_dispatch[fp32]"),
        select="gemm or fp32 or sdpa_throughput", markers="gpu",
    ),
    Case(
        "tf32-torch-flags", "fault", "TF32 switched on through torch's flags by a package imported at start",
        patch("tf32_torch_flags"), trips=("test_fp32_matmul_policy_is_ieee_by_default",),
        select="fp32_matmul_policy or test_gemm_throughput", markers="cpu or gpu",
    ),
    Case(
        "dynamo-disabled", "fault", "torch.compile silently disabled (TORCHDYNAMO_DISABLE=1 in a base image's env)",
        env(TORCHDYNAMO_DISABLE="1"),
        trips=("test_compiled_matches_eager_and_is_timed", "test_inductor_gpu_forward_backward_matches_eager",
               "test_inductor_cpu_generates_cpp_and_matches_eager",
               "test_ddp_amp_compile_parameters_identical_across_ranks"),
        select="compile or inductor", markers="cpu or gpu or multigpu",
    ),
    Case(
        "cudnn-off", "fault", "cuDNN switched off at start: convolutions fall back to torch's slow native kernels",
        patch("cudnn_off"),
        trips=("test_cudnn_conv_throughput[fp16]", "test_cudnn_conv_throughput[bf16]",
               "test_cuda_libraries_loaded_once"),
        select="conv_throughput or libraries_loaded or gemm_throughput", markers="gpu",
    ),
    Case(
        "sdpa-fused-off", "fault", "the fused attention kernels switched off: attention falls back to the math backend",
        patch("sdpa_fused_off"),
        trips=("test_sdpa_throughput_default_dispatch[fp16]", "test_sdpa_throughput_default_dispatch[bf16]"),
        select="sdpa_throughput", markers="gpu",
    ),
    Case(
        "lowp-kernels-lose-precision", "fault",
        "fp16/bf16 GEMM, conv and attention kernels that lose precision (inputs rounded to fp8, as a silently picked "
        "fp8 kernel would)",
        patch("lowp_kernels_lose_precision"),
        trips=("test_low_precision_gemm_error", "test_cudnn_conv_forward_backward_error",
               "test_sdpa_backend_matches_reference", "test_short_training_matches_fp32"),
        select="low_precision_gemm_error or conv_forward_backward or sdpa_backend or short_training "
        "or cuda_initialises",
        markers="gpu",
    ),
    Case(
        "busy-gpu", "fault", "another process keeps the GPU busy (a shared node, a stuck job)",
        Injection(busy_gpu=True),
        trips=("test_gemm_throughput[fp16]", "test_gemm_throughput[bf16]", "test_gemm_throughput[tf32]",
               "test_gemm_throughput[fp32]", "test_cudnn_conv_throughput", "test_dtype_verdicts",
               "test_amp_step_speedup"),
        select="throughput or dtype_verdicts or amp_step_speedup", markers="gpu",
    ),
    Case(
        "no-device", "fault", "no GPU visible to the process (CUDA_VISIBLE_DEVICES empty, a missing --gpus flag)",
        env(CUDA_VISIBLE_DEVICES=""), trips=("test_cuda_driver_stack_is_usable",),
        select="driver_stack or cuda_initialises", markers="cpu or gpu",
    ),
    Case(
        "small-dev-shm", "fault", "a container started without --shm-size: Docker's default 64 MiB /dev/shm",
        Injection(shm_mib=64), trips=("test_dev_shm_is_large_enough",),
        select="dev_shm or dataloader", markers="cpu",
    ),
)  # fmt: skip

PIN_FAULTS: Final = (
    Case(
        "pins-drifted", "fault",
        "the environment drifted from its pins (a wheel upgraded in place, another Python, another venv): the "
        "expectations file names the cu128 image's versions",
        expecting(pins__torch="2.9.1+cu128", pins__cuda="12.8", pins__cudnn="9.10.2.21", pins__nccl="2.27.5",
                  pins__triton="3.5.1", python="3.9", venv="/opt/elsewhere"),
        trips=("test_torch_version_matches_pin", "test_cuda_runtime_matches_pin", "test_cudnn_matches_pin",
               "test_nccl_matches_pin", "test_triton_matches_pin", "test_python_and_venv_match_manifest"),
        select="matches_pin or match_manifest", markers="cpu",
    ),
    Case(
        "driver-too-old", "fault", "an image that needs a newer NVIDIA driver than the host has (min_driver 999.0)",
        expecting(min_driver="999.0"), trips=("test_driver_supports_cuda_runtime",),
        select="driver_supports or driver_stack", markers="cpu",
    ),
)  # fmt: skip

CASES: Final = (*CONTROLS, *FAULTS, *PIN_FAULTS, *IMAGE_FAULTS)
