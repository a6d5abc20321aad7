"""The catalogue: every fault the suite must catch, every legitimate setup it must let pass.

A fault names the real failure it models, how it is injected, the checks it must trip (`trips`) and the `-k`
selection it runs with (its targets, so that a run stays short). `where="image"` marks the faults injected as broken
image variants by the Docker integration tier (tests/fault_coverage/test_broken_variants.py), which this harness
does not run: they are listed so that the checks a bare GPU host cannot reach (pins, the base record) still name
their fault.
"""

from __future__ import annotations

from typing import Final

from fault_coverage.case_model import DETERMINISTIC, Case, Injection, env, expecting, patch
from fault_coverage.host_faults import HOST_FAULTS
from fault_coverage.image_variants import IMAGE_FAULTS

# The checks that time kernels: they are judged in the runs that have the GPU to themselves (the untouched run, the
# faults marked `alone` and each control's timed run); the rest of a control's suite runs side by side with the
# faults (case_runner.units).
TIMED: Final = "throughput or gemm_ratio or fp32_highest or dtype_verdicts or amp_step_speedup"
UNTIMED: Final = f"not ({TIMED})"

CONTROLS: Final = (
    Case("untouched", "control", "the suite as a user runs it, nothing changed", Injection(), alone=True),
    Case(
        "caching-allocator-off", "control",
        "PyTorch's caching allocator off (a debugging setting): statistics and CUDA graphs are missing",
        env(PYTORCH_NO_CUDA_MEMORY_CACHING="1"),
        skips=(("test_amp_memory_saving", "PYTORCH_NO_CUDA_MEMORY_CACHING"),
               ("test_compiled_matches_eager_and_is_timed[max_autotune_cnn]", "PYTORCH_NO_CUDA_MEMORY_CACHING")),
    ),
    Case("module-loading-eager", "control", "CUDA loads every kernel module at start (CUDA_MODULE_LOADING=EAGER)",
         env(CUDA_MODULE_LOADING="EAGER")),
    Case("any-uid", "control", "an arbitrary uid with no home and no passwd entry (OpenShift, `--user 12345:12345`)",
         Injection(uid=12345)),
    Case(
        "deterministic-algorithms", "control",
        "reproducible training as PyTorch's notes advise: torch.use_deterministic_algorithms(True) at start with "
        "CUBLAS_WORKSPACE_CONFIG=:4096:8",
        Injection(deterministic=True),
        skips=(("test_sdpa_backend_matches_reference[fp16-cudnn]", DETERMINISTIC),
               ("test_sdpa_backend_matches_reference[bf16-cudnn]", DETERMINISTIC)),
    ),
    Case("expandable-segments", "control",
         "the caching allocator's expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)",
         env(PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")),
    Case("cudnn-benchmark-on", "control",
         "cuDNN autotuning on at start (torch.backends.cudnn.benchmark = True, as training scripts set it; off is "
         "torch's default, which every other run has)", Injection(patch="cudnn_benchmark_on")),
)  # fmt: skip

FAULTS: Final = (
    Case(
        "tf32-forced-env", "fault", "TF32 forced into cuBLAS from outside torch (NVIDIA_TF32_OVERRIDE=1)",
        env(NVIDIA_TF32_OVERRIDE="1"),
        trips=("test_fp32_highest_is_not_faster_than_ieee", "test_gemm_ratio_to_fp32[fp16]",
               "test_gemm_ratio_to_fp32[bf16]", "test_gemm_ratio_to_fp32[tf32]", "test_gemm_throughput[fp32]",
               "test_fp32_ieee_and_tf32_error_bands", "test_dtype_verdicts"),
        select="gemm or fp32_highest or fp32_ieee or dtype_verdicts", markers="gpu", alone=True,
    ),
    Case(
        "tf32-torch-flags", "fault", "TF32 switched on through torch's flags by a package imported at start",
        patch("tf32_torch_flags", "setting"), trips=("test_fp32_matmul_policy_is_ieee_by_default",),
        select="fp32_matmul_policy or driver_stack", markers="cpu or gpu",
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
        patch("cudnn_off", "setting"),
        trips=("test_cudnn_conv_throughput",),
        select="conv_throughput or conv_fp32 or libraries_loaded or gemm_throughput", markers="gpu", alone=True,
    ),
    Case(
        "sdpa-fused-off", "fault", "the fused attention kernels switched off: attention falls back to the math backend",
        patch("sdpa_fused_off", "setting"),
        trips=("test_sdpa_throughput_default_dispatch[fp16]", "test_sdpa_throughput_default_dispatch[bf16]"),
        select="sdpa_throughput", markers="gpu", alone=True,
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
        trips=("test_gemm_throughput[tf32]", "test_gemm_throughput[fp32]"),
        select="gemm_throughput", markers="gpu", alone=True,
    ),
    Case(
        "lowp-gemm-without-tensor-cores", "fault",
        "fp16/bf16 GEMMs on the CUDA cores (a cuBLAS or torch build without tensor-core kernels for this GPU)",
        patch("lowp_gemm_without_tensor_cores"),
        trips=("test_gemm_throughput[fp16]", "test_gemm_throughput[bf16]", "test_gemm_ratio_to_fp32[fp16]",
               "test_gemm_ratio_to_fp32[bf16]", "test_dtype_verdicts"),
        select="gemm_throughput or gemm_ratio or dtype_verdicts", markers="gpu", alone=True,
    ),
    Case(
        "no-device", "fault", "no GPU visible to the process (CUDA_VISIBLE_DEVICES empty, a missing --gpus flag)",
        env(CUDA_VISIBLE_DEVICES=""), trips=("test_cuda_driver_stack_is_usable",),
        select="driver_stack or cuda_initialises", markers="cpu or gpu",
    ),
    Case(
        "cublas-workspace-none", "fault",
        "cuBLAS left without a workspace (CUBLAS_WORKSPACE_CONFIG=:0:0, a reproducibility setting copied wrong)",
        env(CUBLAS_WORKSPACE_CONFIG=":0:0"), trips=("test_gemm_throughput[tf32]",),
        select="gemm_throughput or gemm_ratio or fp32_highest or dtype_verdicts", markers="gpu", alone=True,
    ),
    Case(
        "cudnn-v8-api-disabled", "fault", "torch's cuDNN v8 (graph) API switched off (TORCH_CUDNN_V8_API_DISABLED=1)",
        env(TORCH_CUDNN_V8_API_DISABLED="1"), trips=("test_cudnn_conv_throughput",),
        select="conv_throughput or conv_forward_backward or conv_fp32", markers="gpu", alone=True,
    ),
    Case(
        "launch-blocking", "fault",
        "a debugging setting left on: every kernel launch synchronous (CUDA_LAUNCH_BLOCKING=1)",
        env(CUDA_LAUNCH_BLOCKING="1"), trips=("test_amp_step_speedup",),
        select="amp_step or compiled_matches_eager or gemm_throughput", markers="gpu", alone=True,
    ),
    Case(
        "tiny-dev-shm", "fault", "a container with a 16 MiB /dev/shm (Docker's default is 64 MiB): DataLoader "
        "workers die with a bus error", Injection(shm_mib=16),
        trips=("test_dev_shm_is_large_enough", "test_dataloader_with_two_workers"),
        select="dev_shm or dataloader", markers="cpu",
    ),
)  # fmt: skip

DISTRIBUTED_FAULTS: Final = (
    Case(
        "collectives-do-nothing", "fault",
        "torch.distributed collectives stubbed to return without communicating (a single-process shim or a mock left "
        "in a site package, a backend that reports success)",
        patch("collectives_do_nothing"),
        trips=("test_nccl_collectives_write_their_output", "test_gloo_allreduce_exact",
               "test_ddp_compression_hooks_match_plain_ddp_gloo", "test_nccl_allreduce_exact",
               "test_nccl_allreduce_bus_bandwidth"),
        select="nccl or gloo or bus_bandwidth or compression_hooks", markers="cpu or gpu or multigpu",
    ),
    Case(
        "ddp-compress-hook-corrupts", "fault",
        "DDP's fp16/bf16 gradient-compression hooks lose precision (the bucket rounded to fp8 before compression)",
        patch("ddp_compress_hook_corrupts"),
        trips=("test_ddp_compression_hooks_match_plain_ddp_nccl", "test_ddp_compression_hooks_match_plain_ddp_gloo"),
        select="compression_hooks", markers="cpu or gpu",
    ),
    Case(
        "nccl-over-sockets", "fault",
        "NCCL forced off NVLink, P2P and shared memory onto TCP sockets (debugging env left set, P2P blocked)",
        env(NCCL_P2P_DISABLE="1", NCCL_SHM_DISABLE="1", NCCL_IB_DISABLE="1"),
        trips=("test_nccl_allreduce_bus_bandwidth",), select="bus_bandwidth or nccl_collectives",
        markers="multigpu or gpu",
        gap="one GPU cannot test NCCL over sockets: the bus-bandwidth check needs two GPUs and skips on one; a "
        "two-GPU host trips it",
    ),
)  # fmt: skip

COMPILE_AND_AMP_FAULTS: Final = (
    Case("cudnn-tf32-forced", "fault",
         "a cuDNN (or a wrapper) that runs fp32 convolutions in TF32 whatever torch.backends.cudnn.allow_tf32 says",
         patch("cudnn_tf32_forced"), trips=("test_cudnn_conv_fp32_is_ieee", "test_cudnn_conv_throughput[fp32]"),
         select="cudnn_conv or autocast_op_dtype_policy", markers="gpu", alone=True),
    Case("sdpa-fp32-tf32", "fault",
         "fp32 attention silently computed in TF32 (a replacement SDPA, or TF32 let into the math backend's cuBLAS)",
         patch("sdpa_fp32_tf32"), trips=("test_sdpa_fp32_default_dispatch_is_ieee",),
         select="sdpa_fp32 or sdpa_backend_matches_reference", markers="gpu"),
    Case("torchscript-disabled", "fault", "TorchScript turned off by PYTORCH_JIT=0 in a base image's environment",
         env(PYTORCH_JIT="0"), trips=("test_torchscript_fp16_on_gpu", "test_torchscript_fp32_on_cpu"),
         select="torchscript or inductor_cpu", markers="cpu or gpu"),
    Case("texpr-fuser-off", "fault", "TorchScript's fuser switched off at start by a framework or a startup hook",
         patch("texpr_fuser_off", "setting"), trips=("test_torchscript_fp16_on_gpu",), select="torchscript",
         markers="cpu or gpu"),
    Case("torchscript-legacy-executor", "fault",
         "TorchScript's profiling executor switched off at start (older training code did this)",
         patch("torchscript_legacy_executor", "setting"), trips=("test_torchscript_fp32_on_cpu",),
         select="torchscript", markers="cpu or gpu"),
    Case("autocast-disabled", "fault",
         "an image or library in which torch.autocast, torch.amp.autocast and torch.cuda.amp.autocast are no-ops",
         patch("autocast_disabled"),
         trips=("test_autocast_op_dtype_policy", "test_amp_memory_saving", "test_amp_step_speedup",
                "test_fp16_gradient_underflow_survives_with_scaling"),
         select="autocast or amp_step or amp_memory or grad_scaler or underflow", markers="gpu", alone=True),
    # The same faults under reproducible training, where the suite reads its METRIC.deterministic floors
    Case("deterministic-sdpa-fused-off", "fault",
         "the fused attention kernels switched off under torch.use_deterministic_algorithms(True)",
         Injection(deterministic=True, patch="sdpa_fused_off", patch_kind="setting"),
         trips=("test_sdpa_throughput_default_dispatch[fp16]", "test_sdpa_throughput_default_dispatch[bf16]"),
         select="sdpa_throughput", markers="gpu", alone=True),
    Case("deterministic-autocast-disabled", "fault",
         "autocast a no-op under torch.use_deterministic_algorithms(True)",
         Injection(deterministic=True, patch="autocast_disabled"), trips=("test_amp_step_speedup",),
         select="amp_step", markers="gpu", alone=True),
    Case("grad-scaler-disabled", "fault",
         "a GradScaler that ignores enabled=True (scale 1.0, no backoff, never skips an inf step)",
         patch("grad_scaler_disabled"),
         trips=("test_grad_scaler_growth_backoff_and_skip",),
         select="grad_scaler or autocast_op_dtype_policy", markers="gpu"),
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
)  # fmt: skip

CASES: Final = (
    *CONTROLS,
    *FAULTS,
    *COMPILE_AND_AMP_FAULTS,
    *DISTRIBUTED_FAULTS,
    *HOST_FAULTS,
    *PIN_FAULTS,
    *IMAGE_FAULTS,
)
