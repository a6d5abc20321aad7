"""The in-image paths: where things live in every image, as the builder, the templates, the
tests and the reports share them. Standard library only; this is their one home.

The builder (``pytorch_cuda``) and the host-side report may import this module; the
suite itself reads it too. Nothing here may import torch, pytest or the builder.
"""

from __future__ import annotations

from typing import Final

# Where things live inside every image.
ETC_DIR: Final = "/etc/pytorch-cuda"
MANIFEST_PATH: Final = f"{ETC_DIR}/manifest.json"
REQUIREMENTS_PATH: Final = f"{ETC_DIR}/requirements.txt"
LOCK_PATH: Final = f"{ETC_DIR}/requirements.lock"
# The base image's ID and its Debian packages (dpkg) as the build found them.
BASE_RECORD_PATH: Final = f"{ETC_DIR}/base.json"
SBOM_PATH: Final = f"{ETC_DIR}/sbom.cdx.json"
SHARE_DIR: Final = "/opt/pytorch-cuda"
SUITE_DIR: Final = f"{SHARE_DIR}/conformance"
# This package, beside the suite: the suite, the entry banner and precision-check import it from SHARE_DIR.
CONTRACT_DIR: Final = f"{SHARE_DIR}/pytorch_cuda_contract"
# examples/ddp_check.py: DDP across ranks (and containers), parameters compared by checksum.
DDP_CHECK_PATH: Final = f"{SHARE_DIR}/examples/ddp_check.py"
VENV_PATH: Final = "/opt/pytorch"
# where the build mounts the in-image checks' Inductor cache volume (the image makes it, owned by its user)
INDUCTOR_CACHE_DIR: Final = "/var/cache/pytorch-cuda/inductor"

# The `conformance` command writes its results here unless $CONFORMANCE_OUT says otherwise.
RESULTS_DIR_ENV: Final = "CONFORMANCE_OUT"
DEFAULT_RESULTS_DIR: Final = "/tmp/conformance"
RESULTS_FILE: Final = "results.json"
JUNIT_FILE: Final = "junit.xml"
SUMMARY_FILE: Final = "summary.md"
RESULTS_PATH: Final = f"{DEFAULT_RESULTS_DIR}/{RESULTS_FILE}"
JUNIT_PATH: Final = f"{DEFAULT_RESULTS_DIR}/{JUNIT_FILE}"
SUMMARY_PATH: Final = f"{DEFAULT_RESULTS_DIR}/{SUMMARY_FILE}"

# The environment variable that points the suite at a manifest.
MANIFEST_ENV: Final = "PYTORCH_CUDA_MANIFEST"


# precision-check: the package and its examples in the image; the wrapper puts SHARE_DIR
# on PYTHONPATH so that `python -m precision_check` (and `from precision_check import Workload`) works.
PRECISION_CHECK_DIR: Final = f"{SHARE_DIR}/precision_check"
PRECISION_CHECK_EXAMPLES_DIR: Final = f"{SHARE_DIR}/examples/precision_check"


# The entry point and environment report every flavour ships. The stdlib
# package pytorch_cuda_entry lives next to the suite, under SHARE_DIR, so that with
# SHARE_DIR on sys.path both `pytorch_cuda_entry` and `conformance` import.
ENTRY_PACKAGE_PARENT: Final = SHARE_DIR
ENTRY_PACKAGE_DIR: Final = f"{SHARE_DIR}/pytorch_cuda_entry"
ENTRYPOINT_PATH: Final = "/usr/local/bin/pytorch-cuda-entry"
INFO_COMMAND_PATH: Final = "/usr/local/bin/pytorch-cuda-info"
QUIET_ENV: Final = "PYTORCH_CUDA_QUIET"
# The devel flavour's CUDA_HOME: links into the nvidia-* wheels' bin/, include/, lib/.
CUDA_HOME_PATH: Final = f"{SHARE_DIR}/cuda"
# What a child flavour installs on top of its parent's venv (constrained by LOCK_PATH), and its lock.
FLAVOUR_REQUIREMENTS_PATH: Final = f"{ETC_DIR}/requirements-flavour.txt"
FLAVOUR_LOCK_PATH: Final = f"{ETC_DIR}/requirements-flavour.lock"


def template_context() -> dict[str, str]:
    """The paths as the render step hands them to the templates (``{{ paths.manifest }}``)."""
    return {
        "etc_dir": ETC_DIR,
        "manifest": MANIFEST_PATH,
        "requirements": REQUIREMENTS_PATH,
        "lock": LOCK_PATH,
        "base_record": BASE_RECORD_PATH,
        "sbom": SBOM_PATH,
        "ddp_check": DDP_CHECK_PATH,
        "share_dir": SHARE_DIR,
        "suite_dir": SUITE_DIR,
        "contract_dir": CONTRACT_DIR,
        "venv": VENV_PATH,
        "inductor_cache": INDUCTOR_CACHE_DIR,
        "results_dir_env": RESULTS_DIR_ENV,
        "results_dir": DEFAULT_RESULTS_DIR,
        "results_file": RESULTS_FILE,
        "junit_file": JUNIT_FILE,
        "summary_file": SUMMARY_FILE,
        "manifest_env": MANIFEST_ENV,
        "entry_package_parent": ENTRY_PACKAGE_PARENT,
        "entry_package_dir": ENTRY_PACKAGE_DIR,
        "entrypoint": ENTRYPOINT_PATH,
        "info_command": INFO_COMMAND_PATH,
        "quiet_env": QUIET_ENV,
        "cuda_home": CUDA_HOME_PATH,
        "flavour_requirements": FLAVOUR_REQUIREMENTS_PATH,
        "flavour_lock": FLAVOUR_LOCK_PATH,
        "precision_check_dir": PRECISION_CHECK_DIR,
        "precision_check_examples_dir": PRECISION_CHECK_EXAMPLES_DIR,
    }
