"""Simulated broken environments: the right conformance check must fail (or skip) and say why.

Each case runs the suite in a subprocess (`python -m pytest <repo>/conformance -m cpu ...`)
from a temporary directory and reads its `--conformance-json` output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.support.suite_run import SUITE, SuiteRun, manifest_document, run_suite, write_manifest

PIN_TESTS = (
    "test_torch_version_matches_pin",
    "test_cuda_runtime_matches_pin",
    "test_cudnn_matches_pin",
    "test_nccl_matches_pin",
    "test_triton_matches_pin",
    "test_python_and_venv_match_manifest",
)
PIN_KEYWORD = "matches_pin or matches_wheel or match_manifest"
CPU_ONLY_TORCH = torch.version.cuda is None
# The cu128 image's torch pin, wrong on any host but one with that torch: there (inside the
# cu128 image, where scripts/test.sh runs these tests) a pin that is wrong there.
LYING_TORCH = "2.9.1+cu128" if torch.__version__ != "2.9.1+cu128" else "2.9.0+cu126"


@pytest.fixture(scope="module")
def no_manifest_run(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    workdir = tmp_path_factory.mktemp("no-manifest")
    return run_suite(
        workdir,
        "--junitxml",
        str(workdir / "junit.xml"),
        keyword=f"{PIN_KEYWORD} or dev_shm",
        env={"NCCL_NVLS_ENABLE": "1", "PYTORCH_CUDA_MANIFEST": ""},
    )


def test_no_manifest_skips_pin_checks_with_reason(no_manifest_run: SuiteRun) -> None:
    for name in PIN_TESTS:
        assert no_manifest_run.outcome(name) == "skipped"
        assert no_manifest_run.message(name) == (
            "no build manifest (/etc/pytorch-cuda/manifest.json); pass --manifest FILE to check pins"
        )


def test_json_document_shape(no_manifest_run: SuiteRun) -> None:
    document = no_manifest_run.document
    assert document["schema"] == 2
    assert document["markexpr"] == "cpu"
    assert document["environment"]["torch"] == torch.__version__
    assert document["manifest"] == {
        "path": "/etc/pytorch-cuda/manifest.json",
        "origin": "default",
        "found": False,
        "error": None,
        "content": None,
    }
    totals = document["totals"]
    counted = totals["passed"] + totals["failed"] + totals["skipped"] + totals["not_run"]
    assert totals["total"] == counted == len(document["tests"])
    assert totals["not_run"] > 0
    deselected = [r for r in document["tests"].values() if r["outcome"] == "not_run"]
    assert all(r["message"] == "deselected (-m / -k)" for r in deselected)
    assert document["image"] == {"digest": None, "revision": None, "ref": None}
    assert str(document["suite_digest"]).startswith("sha256:")
    assert "cublas_version" in document["environment"]
    shm = no_manifest_run.result("test_dev_shm_is_large_enough")
    assert shm["markers"] == ["cpu"]
    assert shm["metrics"]["dev_shm_size"]["unit"] == "MiB"
    assert isinstance(document["wall_time_s"], float)
    junit = (
        Path(no_manifest_run.document["argv"][no_manifest_run.document["argv"].index("--junitxml") + 1])
    ).read_text()
    assert "metric.dev_shm_size" in junit


def test_nvlink_multicast_is_forced_off(no_manifest_run: SuiteRun) -> None:
    assert no_manifest_run.document["environment"]["distributed_env"] == {
        "NCCL_NVLS_ENABLE": "0",
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1",
    }


@pytest.fixture(scope="module")
def lying_manifest_run(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    workdir = tmp_path_factory.mktemp("lying-manifest")
    manifest = write_manifest(workdir, _lying_document())
    return run_suite(workdir, "--manifest", str(manifest), keyword=PIN_KEYWORD)


def _lying_document() -> dict[str, Any]:
    """The cu128 manifest, whose torch pin is wrong here; inside the cu128 image itself, a wrong one."""
    document = manifest_document()
    document["pins"] = {**document["pins"], "torch": LYING_TORCH}
    return document


def test_wrong_torch_pin_fails_naming_both_versions(lying_manifest_run: SuiteRun) -> None:
    assert lying_manifest_run.outcome("test_torch_version_matches_pin") == "failed"
    message = lying_manifest_run.message("test_torch_version_matches_pin")
    assert LYING_TORCH in message
    assert torch.__version__ in message


@pytest.mark.skipif(not CPU_ONLY_TORCH, reason="needs CPU-only torch (no cuDNN/NCCL/Triton)")
def test_cuda_library_pins_fail_when_torch_lacks_them(lying_manifest_run: SuiteRun) -> None:
    run = lying_manifest_run
    assert run.outcome("test_cuda_runtime_matches_pin") == "failed"
    assert "12.8" in run.message("test_cuda_runtime_matches_pin")
    assert run.outcome("test_cudnn_matches_pin") == "failed"
    assert "torch.backends.cudnn.version() is None" in run.message("test_cudnn_matches_pin")
    assert "91002" in run.message("test_cudnn_matches_pin")
    assert run.outcome("test_nccl_matches_pin") == "failed"
    assert "torch has no NCCL" in run.message("test_nccl_matches_pin")
    assert run.outcome("test_triton_matches_pin") == "failed"
    assert "3.5.1" in run.message("test_triton_matches_pin")
    for name in ("test_torch_cudnn_matches_wheel", "test_torch_nccl_matches_wheel"):
        assert run.outcome(name) == "failed"
        assert "is not installed" in run.message(name)
    assert run.outcome("test_python_and_venv_match_manifest") == "failed"


def test_matching_manifest_passes_and_absent_pins_skip(tmp_path: Path) -> None:
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    pins = {"torch": torch.__version__, "cuda": None, "cudnn": None, "nccl": None, "triton": None}
    document = manifest_document(target="cpu", python=python, venv=sys.prefix, pins=pins, wheels={})
    run = run_suite(tmp_path, "--manifest", str(write_manifest(tmp_path, document)), keyword=PIN_KEYWORD)
    assert run.outcome("test_torch_version_matches_pin") == "passed"
    assert run.outcome("test_python_and_venv_match_manifest") == "passed"
    assert run.outcome("test_cudnn_matches_pin") == "skipped"
    assert run.message("test_cudnn_matches_pin") == "manifest cpu has no cudnn pin"
    assert run.document["manifest"]["origin"] == "--manifest"


def test_missing_named_manifest_fails_pin_checks(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--manifest", str(tmp_path / "absent.json"), keyword="torch_version_matches_pin")
    assert run.outcome("test_torch_version_matches_pin") == "failed"
    assert "absent.json (from --manifest) does not exist" in run.message("test_torch_version_matches_pin")


def test_manifest_from_environment_variable(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path, _lying_document())
    run = run_suite(tmp_path, keyword="torch_version_matches_pin", env={"PYTORCH_CUDA_MANIFEST": str(manifest)})
    assert run.outcome("test_torch_version_matches_pin") == "failed"
    assert run.document["manifest"]["origin"] == "$PYTORCH_CUDA_MANIFEST"


def test_cc_pointing_to_missing_compiler_fails_compiler_check(tmp_path: Path) -> None:
    run = run_suite(tmp_path, keyword="c_compiler", env={"CC": "/nonexistent/bin/cc"})
    assert run.outcome("test_c_compiler_builds_against_python_h") == "failed"
    assert "CC='/nonexistent/bin/cc' is not an executable compiler" in run.message(
        "test_c_compiler_builds_against_python_h"
    )


def test_path_without_compilers_fails_compiler_check_and_cpu_inductor(tmp_path: Path) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    env = {"PATH": str(empty_bin), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor-cache")}
    run = run_suite(tmp_path, keyword="c_compiler or inductor_cpu or vector_isa", env=env)
    assert run.outcome("test_c_compiler_builds_against_python_h") == "failed"
    assert "no C compiler" in run.message("test_c_compiler_builds_against_python_h")
    assert run.outcome("test_inductor_cpu_generates_cpp_and_matches_eager") == "failed"
    message = run.message("test_inductor_cpu_generates_cpp_and_matches_eager")
    assert message.startswith("CPU Inductor compile failed: "), message
    assert run.outcome("test_openmp_and_cpu_vector_isa") == "failed"
    assert "Inductor detects no CPU vector ISA" in run.message("test_openmp_and_cpu_vector_isa")


@pytest.fixture
def fake_cudnn_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "foreign-cuda" / "lib64"
    directory.mkdir(parents=True)
    (directory / "libcudnn.so.9").write_bytes(b"not really cuDNN")
    return directory


def test_foreign_cudnn_on_ld_library_path_fails_shadowing_check(tmp_path: Path, fake_cudnn_dir: Path) -> None:
    run = run_suite(tmp_path, keyword="ld_library_path", env={"LD_LIBRARY_PATH": str(fake_cudnn_dir)})
    assert run.outcome("test_ld_library_path_has_no_foreign_cuda_libraries") == "failed"
    message = run.message("test_ld_library_path_has_no_foreign_cuda_libraries")
    assert str(fake_cudnn_dir) in message
    assert "libcudnn.so.9" in message


def test_cuda_stubs_on_ld_library_path_fail_shadowing_check(tmp_path: Path) -> None:
    run = run_suite(tmp_path, keyword="ld_library_path", env={"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs"})
    assert run.outcome("test_ld_library_path_has_no_foreign_cuda_libraries") == "failed"
    assert "stubs" in run.message("test_ld_library_path_has_no_foreign_cuda_libraries")


def test_clean_environment_passes_policy_compiler_and_shadowing_checks(tmp_path: Path) -> None:
    run = run_suite(tmp_path, keyword="fp32_matmul_policy or c_compiler or ld_library_path or dev_shm")
    for name in (
        "test_fp32_matmul_policy_is_ieee_by_default",
        "test_c_compiler_builds_against_python_h",
        "test_ld_library_path_has_no_foreign_cuda_libraries",
    ):
        assert run.outcome(name) == "passed", run.message(name)


def test_suite_runs_from_any_directory_without_project_config(tmp_path: Path) -> None:
    run = run_suite(tmp_path, keyword="dev_shm")
    assert run.outcome("test_dev_shm_is_large_enough") in {"passed", "failed"}
    assert not (tmp_path / ".pytest_cache").exists()
    assert os.path.realpath(run.document["environment"]["python_executable"]) == os.path.realpath(sys.executable)


def test_unimportable_torch_still_writes_a_failing_report(tmp_path: Path) -> None:
    """Like an image whose libcudnn was deleted: `import torch` fails, every module fails with the reason."""
    fake_torch = tmp_path / "shadow" / "torch"
    fake_torch.mkdir(parents=True)
    (fake_torch / "__init__.py").write_text(
        'raise ImportError("libcudnn.so.9: cannot open shared object file: No such file or directory")\n'
    )
    run = run_suite(tmp_path, env={"PYTHONPATH": str(fake_torch.parent)})
    assert run.returncode != 0
    assert run.document["totals"]["passed"] == 0
    pins = [r for nodeid, r in run.document["tests"].items() if nodeid.endswith("test_pins.py")]
    assert len(pins) == 1
    assert pins[0]["outcome"] == "failed"
    assert pins[0]["phase"] == "collect"
    assert "libcudnn.so.9: cannot open shared object file" in pins[0]["message"]
    assert "libcudnn.so.9" in run.document["environment"]["error"]


def test_unwritable_json_path_is_a_usage_error_before_any_test(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")
    command = [sys.executable, "-m", "pytest", "-c", str(ini), "-p", "no:cacheprovider", str(SUITE), "-m", "cpu"]
    command += ["-k", "dev_shm", "--conformance-json", str(blocker / "results.json")]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 4, result.stdout + result.stderr
    assert f"--conformance-json {blocker / 'results.json'}: cannot write there" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
