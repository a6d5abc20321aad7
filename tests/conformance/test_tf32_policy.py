"""The FP32 matmul policy under broken environments: TF32 variables are notes, a sitecustomize that changes
the policy (legacy or new fp32_precision API) is a named failure with a JSON, never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.suite_run import run_suite


@pytest.mark.parametrize(
    ("variable", "value"), [("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"), ("NVIDIA_TF32_OVERRIDE", "1")]
)
def test_tf32_override_env_is_a_note_not_a_failure(tmp_path: Path, variable: str, value: str) -> None:
    """The variables only may force TF32; the GPU error band and the fp32 bound measure whether they do."""
    run = run_suite(tmp_path, keyword="fp32_matmul_policy", env={variable: value})
    if run.outcome("test_fp32_matmul_policy_is_ieee_by_default") == "failed":
        # torch >= 2.12 turns TORCH_ALLOW_TF32_CUBLAS_OVERRIDE into its reported policy: that gates, naming the cause
        assert variable == "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"
        message = run.message("test_fp32_matmul_policy_is_ieee_by_default")
        assert f"torch reads {variable}={value!r} from the environment" in message
    notes = run.result("test_fp32_matmul_policy_is_ieee_by_default")["notes"]
    assert any(note.startswith(f"{variable}={value!r} is set") for note in notes), notes


def test_sitecustomize_with_new_tf32_api_fails_policy_check_not_the_run(tmp_path: Path) -> None:
    """Mixing the new fp32_precision API with legacy reads raises; that must be a named failure, with JSON."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text('import torch\ntorch.backends.cuda.matmul.fp32_precision = "tf32"\n')
    run = run_suite(tmp_path, keyword="fp32_matmul_policy or dev_shm", env={"PYTHONPATH": str(site)})
    assert run.returncode == 1, run.output[-3000:]
    assert "INTERNALERROR" not in run.output
    assert run.outcome("test_fp32_matmul_policy_is_ieee_by_default") == "failed"
    message = run.message("test_fp32_matmul_policy_is_ieee_by_default")
    assert "cuda_matmul_fp32_precision was 'tf32' at startup (new fp32_precision API)" in message
    assert "mix of the legacy and new APIs" in message
    assert run.outcome("test_dev_shm_is_large_enough") == "passed"


def test_sitecustomize_forcing_high_precision_fails_fp32_policy(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import torch\ntorch.set_float32_matmul_precision('high')\n")
    run = run_suite(tmp_path, keyword="fp32_matmul_policy", env={"PYTHONPATH": str(site)})
    assert run.outcome("test_fp32_matmul_policy_is_ieee_by_default") == "failed"
    assert "was 'high' at startup" in run.message("test_fp32_matmul_policy_is_ieee_by_default")
