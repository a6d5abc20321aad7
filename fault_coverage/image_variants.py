"""The faults injected as broken variants of the real cu12 image: tests/fault_coverage/test_broken_variants.py builds
each one (its Dockerfile instructions run as root on top of the image), runs the named CPU checks in it and
asserts that the ones in `trips` fail while a control check passes. The bare-GPU-host harness does not run them;
the matrix names them for the checks a bare host cannot reach (the base record, the image's own manifest)."""

from __future__ import annotations

from typing import Final

from fault_coverage.case_model import Case, Injection

SITE: Final = "/opt/pytorch/lib/python3.13/site-packages"  # the cu12 image's venv
STARTUP_PTH: Final = f"{SITE}/zz-tf32.pth"  # site.py runs its `import` lines at every start


def variant(name: str, models: str, instructions: str, select: str, trips: tuple[str, ...]) -> Case:
    """A broken variant of the real image, built and checked by tests/fault_coverage/test_broken_variants.py."""
    return Case(name, "fault", models, Injection(image_variant=instructions), trips=trips, select=select,
                markers="cpu", where="image")  # fmt: skip


IMAGE_FAULTS: Final = (
    variant("compiler-removed", "an image without its C compiler (Inductor's CPU backend and C extensions need it)",
            "RUN rm -f /usr/bin/gcc* /usr/bin/cc /usr/bin/c++ /usr/bin/g++* /usr/bin/x86_64-linux-gnu-gcc* "
            "/usr/bin/x86_64-linux-gnu-g++* /etc/alternatives/cc /etc/alternatives/c++",
            "compiler or inductor_cpu",
            ("test_c_compiler_builds_against_python_h", "test_inductor_cpu_generates_cpp_and_matches_eager")),
    variant("python-h-removed", "an image without Python.h (C extensions cannot build)",
            "RUN rm -f /usr/include/python3.13/Python.h", "compiler", ("test_c_compiler_builds_against_python_h",)),
    variant("manifest-lies-about-torch", "the manifest pins another torch than the image carries",
            "RUN sed -i 's/2.9.1+cu128/2.9.0+cu128/' /etc/pytorch-cuda/manifest.json", "matches_pin",
            ("test_torch_version_matches_pin",)),
    variant("nccl-pin-drifted", "the manifest pins another NCCL than the image carries",
            'RUN sed -i \'s/"nccl": "2.27.5"/"nccl": "2.27.3"/\' /etc/pytorch-cuda/manifest.json', "nccl",
            ("test_nccl_matches_pin",)),
    variant("second-cudnn-on-loader-path", "a second cuDNN in the loader cache (a CUDA base image's copy)",
            f"RUN cp {SITE}/nvidia/cudnn/lib/libcudnn.so.9 /usr/local/lib/ && ldconfig", "ldconfig",
            ("test_ldconfig_has_no_second_cuda_library",)),
    variant("foreign-cublas-on-ld-library-path", "a foreign cuBLAS on LD_LIBRARY_PATH (a CUDA toolkit base)",
            f"RUN mkdir -p /usr/local/cuda/lib64 && cp {SITE}/nvidia/cublas/lib/libcublas.so.12 /usr/local/cuda/lib64/"
            "\nENV LD_LIBRARY_PATH=/usr/local/cuda/lib64", "ld_library_path",
            ("test_ld_library_path_has_no_foreign_cuda_libraries",)),
    # On a CPU host, what is observable of TF32 is the policy torch reports at start, changed by a .pth line in
    # site-packages (what an installed package can do; a sitecustomize.py in the venv would be shadowed by
    # Debian's /usr/lib/python3.13/sitecustomize.py, so it would test nothing).
    variant("tf32-at-start-matmul-precision",
            "TF32 switched on at start by an installed package (set_float32_matmul_precision)",
            f"RUN echo 'import torch; torch.set_float32_matmul_precision(\"high\")' > {STARTUP_PTH}",
            "fp32_matmul_policy", ("test_fp32_matmul_policy_is_ieee_by_default",)),
    variant("tf32-at-start-fp32-precision", "TF32 switched on at start by an installed package (fp32_precision API)",
            f"RUN echo 'import torch; torch.backends.cuda.matmul.fp32_precision = \"tf32\"' > {STARTUP_PTH}",
            "fp32_matmul_policy", ("test_fp32_matmul_policy_is_ieee_by_default",)),
    variant("broken-dependency", "a package uninstalled under another's requirement (pip check)",
            f"RUN {SITE}/../../../bin/pip uninstall -y -q jinja2", "pip_check", ("test_pip_check_is_clean",)),
    variant("debian-package-removed", "a Debian package removed after the build recorded the base",
            "RUN dpkg --purge --force-depends ca-certificates", "debian_packages",
            ("test_debian_packages_match_the_base_record",)),
)  # fmt: skip
