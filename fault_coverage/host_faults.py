"""Faults of the host's libraries, driver, loader and the CUDA math libraries, injected on a bare GPU host: the host's
own cuDNN or NCCL loaded first, a copied library, a sitecustomize patch (a wrong kernel), and a replaced value where
no real fault can be made on a shared host (an older driver, a torch build without this GPU's kernels, a dropped
device assertion, another cuBLAS wheel's metadata)."""

from __future__ import annotations

from typing import Final

from fault_coverage.case_model import Case, Injection, env, patch

# The loader-cache check is not gated on a bare host (its CUDA toolkit and cuDNN/NCCL packages are legitimate):
# its faults are image variants (fault_coverage/image_variants.py).
HOST_CUDNN_CHECKS: Final = (
    "libraries_loaded or cudnn_runtime or cudnn_matches or ld_library_path or torch_version_matches_pin"
)
# The smoke check accepts a runtime cuDNN newer than the one torch was compiled with, of the same major (cuDNN's
# compatible case, by design); it trips only where the host's cuDNN is older (torch 2.11 on an H100 host) and passes
# where it is newer (the shipped stack, compiled 9.8, on that host's 9.14: 2026-12-07).
HOST_CUDNN_OLDER: Final = (
    "test_cudnn_runtime_matches_compile_version",
    "the host's cuDNN is older than the one torch was compiled with (a newer minor is accepted by design)",
)
HOST_FAULTS: Final = (
    Case("foreign-cudnn-preloaded", "fault",
         "a cuDNN from outside torch's wheels loaded first (a base image's copy on the preload path)",
         Injection(preload_copy="libcudnn.so.9*"), trips=("test_cuda_libraries_loaded_once",),
         select="libraries_loaded or ld_library_path", markers="cpu or gpu"),
    Case("cublas-folder-on-ld-library-path", "fault",
         "a CUDA toolkit's cuBLAS folder put on LD_LIBRARY_PATH ahead of the wheels",
         Injection(library_path_copy="libcublas*.so.[0-9]*"),
         trips=("test_ld_library_path_has_no_foreign_cuda_libraries",),
         select="ld_library_path or driver_stack", markers="cpu"),
    Case("host-cudnn-preloaded", "fault",
         "another cuDNN loaded first: the host's own (a distribution's libcudnn9 package, another minor than torch's "
         "wheel) on LD_PRELOAD", Injection(preload_host="libcudnn.so.9"),
         trips=("test_cuda_libraries_loaded_once", "test_torch_cudnn_matches_wheel", "test_cudnn_matches_pin"),
         trips_where=(HOST_CUDNN_OLDER,),
         select=HOST_CUDNN_CHECKS, markers="cpu or gpu"),
    Case("host-cudnn-on-ld-library-path", "fault",
         "another cuDNN found first: the folder of the host's own cuDNN put first on LD_LIBRARY_PATH",
         Injection(library_path_host="libcudnn.so.9"),
         trips=("test_cuda_libraries_loaded_once", "test_torch_cudnn_matches_wheel", "test_cudnn_matches_pin",
                "test_ld_library_path_has_no_foreign_cuda_libraries"),
         trips_where=(HOST_CUDNN_OLDER,),
         select=HOST_CUDNN_CHECKS, markers="cpu or gpu"),
    Case("host-nccl-preloaded", "fault",
         "another NCCL loaded first: the host's own libnccl (a distribution's package) on LD_PRELOAD; torch still "
         "reports the wheel's NCCL (on an H100, host 2.28.3 preloaded, torch said 2.28.9), so only the two copies "
         "in the process tell it",
         Injection(preload_host="libnccl.so.2"),
         trips=("test_cuda_libraries_loaded_once",),
         select="libraries_loaded or nccl_matches or torch_version_matches_pin", markers="cpu or gpu"),
    Case("nccl-version-mismatch", "fault",
         "torch loads another NCCL than the nvidia-nccl wheel (a system libnccl of another release; kept beside "
         "host-nccl-preloaded, under which torch still reports the wheel's version)",
         patch("nccl_version_mismatch", "replaced value"),
         trips=("test_torch_nccl_matches_wheel", "test_nccl_matches_pin"),
         select="nccl_matches or torch_version_matches_pin", markers="cpu"),
    Case("nvml-reports-old-driver", "fault", "an NVIDIA driver too old for the CUDA runtime (470.57.02, from NVML)",
         patch("nvml_reports_old_driver", "replaced value"), trips=("test_driver_supports_cuda_runtime",),
         select="driver_supports or driver_stack", markers="cpu"),
    Case("device-assert-ignored", "fault", "device-side assertions that never reach Python (kernel errors dropped)",
         patch("device_assert_ignored", "replaced value"), trips=("test_device_side_assert_propagates",),
         select="device_side_assert or cusolver_svd", markers="gpu"),
    Case("cusolver-svd-low-precision", "fault", "cuSOLVER's float64 SVD silently computed in float32",
         patch("cusolver_svd_low_precision"), trips=("test_cusolver_svd",),
         select="cusolver_svd or cufft_rfft", markers="gpu"),
    Case("cufft-low-precision", "fault", "cuFFT computing float64 transforms in float32 (float32 ones in float16)",
         patch("cufft_low_precision"), trips=("test_cufft_rfft",), select="cufft_rfft or cusolver_svd", markers="gpu"),
    Case("curand-skewed", "fault", "a generator whose uniforms are bent (x**1.02) and normals shifted by 0.01",
         patch("curand_skewed"), trips=("test_curand_statistics",), select="curand_statistics or cusolver_svd",
         markers="gpu"),
    Case("curand-seed-ignored", "fault", "CUDA sampling that ignores the generator (and its seed) passed to it",
         patch("curand_seed_ignored"), trips=("test_curand_statistics",), select="curand_statistics or cusolver_svd",
         markers="gpu"),
    Case("cublas-wheel-shadowed", "fault",
         "the loaded cuBLAS is not the installed wheel's (a same-major toolkit copy shadows it): another minor's "
         "nvidia-cublas distribution first on sys.path",
         patch("cublas_wheel_shadowed", "replaced value"), trips=("test_cublas_version_matches_cuda_major",),
         select="cublas_version or cusolver_svd", markers="gpu"),
    Case("fp64-gemm-in-fp32", "fault", "a GPU, driver or cuBLAS computing float64 matmuls in float32",
         patch("fp64_gemm_in_fp32"), trips=("test_cuda_initialises",), select="cuda_initialises or every_gpu_arch",
         markers="gpu"),
    Case("arch-list-without-device", "fault", "a torch build without kernels for this GPU's architecture",
         patch("arch_list_without_device", "replaced value"), trips=("test_every_gpu_arch_has_kernels",),
         select="every_gpu_arch or cuda_initialises", markers="gpu"),
    Case("compiled-kernels-ignored", "fault",
         "no kernel image the GPU can run: the driver ignores the compiled kernels (CUDA_FORCE_PTX_JIT=1) and finds "
         "no PTX to JIT for this GPU, as with an image built without this GPU's architecture",
         env(CUDA_FORCE_PTX_JIT="1"), trips=("test_every_gpu_arch_has_kernels", "test_cuda_initialises"),
         select="every_gpu_arch or cuda_initialises", markers="gpu"),
    Case("fp16-reduction-in-fp16", "fault",
         "cuBLAS reducing fp16 GEMMs in fp16 though torch forbids it (partial sums overflow at 65504)",
         patch("fp16_reduction_in_fp16"), trips=("test_fp16_reduction_does_not_overflow_at_65504",),
         select="65504 or low_precision_gemm_error", markers="gpu"),
    Case("fp16-accumulation-allowed", "fault",
         "fp16 GEMMs accumulated in fp16 through torch's public flag (allow_fp16_accumulation) set at start",
         patch("fp16_accumulation_allowed", "setting"),
         trips=("test_fp16_reduction_does_not_overflow_at_65504", "test_low_precision_gemm_error[fp16]"),
         select="65504 or low_precision_gemm_error or fp32_matmul_policy", markers="gpu"),
    Case("cc-not-executable", "fault", "CC names a C compiler that is not installed (C extensions cannot build)",
         env(CC="/nonexistent/gcc"), trips=("test_c_compiler_builds_against_python_h",),
         select="compiler or dev_shm", markers="cpu"),
    Case("cxx-not-executable", "fault", "CXX names a C++ compiler that is not installed (Inductor's CPU backend)",
         env(CXX="/nonexistent/g++"),
         trips=("test_inductor_cpu_generates_cpp_and_matches_eager", "test_openmp_and_cpu_vector_isa"),
         select="inductor_cpu or vector_isa or compiler", markers="cpu"),
    Case("unmet-requirement", "fault", "an installed package whose requirement is missing (pip check)",
         patch("unmet_requirement", "environment"), trips=("test_pip_check_is_clean",),
         select="pip_check or torch_version_matches_pin", markers="cpu",
         gap="a venv without pip (the carried stack's) cannot run `pip check`: the check skips, naming it; the image "
         "and a host whose Python has pip trip it"),
)  # fmt: skip
