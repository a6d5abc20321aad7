"""The distributed workers' environment: NVLink SHARP and multicast off over the user's values, unless
CONFORMANCE_ALLOW_NVLS opts back in to NVLS."""

from __future__ import annotations

from conformance.support.processes.env import apply_safe_distributed_env


def test_safe_distributed_env_overrides_user_values() -> None:
    environ = {"NCCL_NVLS_ENABLE": "1", "NVSHMEM_DISABLE_NVLS": "0"}
    assert apply_safe_distributed_env(environ) == {
        "NCCL_NVLS_ENABLE": "0",
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1",
    }
    opted_out = {"NCCL_NVLS_ENABLE": "1", "CONFORMANCE_ALLOW_NVLS": "1"}
    applied = apply_safe_distributed_env(opted_out)
    assert applied["NCCL_NVLS_ENABLE"] == "1"
    assert applied["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
