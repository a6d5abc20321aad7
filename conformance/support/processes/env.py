"""Environment variables every process of the suite must carry.

NVLink multicast (NVLS) in NCCL, PyTorch symmetric memory and NVSHMEM can put a
shared host's GPUs out of service, so the suite forces it off before it starts
any process.  ``setdefault`` is not enough: an inherited ``NCCL_NVLS_ENABLE=1``
would survive it.  Set ``CONFORMANCE_ALLOW_NVLS=1`` to keep values you set
yourself (unset variables still get the safe value).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Final

SAFE_DISTRIBUTED_ENV: Final[dict[str, str]] = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
KEEP_USER_VALUES_VAR: Final = "CONFORMANCE_ALLOW_NVLS"


def apply_safe_distributed_env(
    environ: MutableMapping[str, str] | None = None,
) -> dict[str, str]:
    """Force the NVLink-multicast-off variables into ``environ`` (default os.environ).

    Returns the values in effect afterwards.
    """
    env: MutableMapping[str, str] = os.environ if environ is None else environ
    keep_user_values = env.get(KEEP_USER_VALUES_VAR) == "1"
    for name, safe_value in SAFE_DISTRIBUTED_ENV.items():
        if keep_user_values and name in env:
            continue
        env[name] = safe_value
    return {name: env[name] for name in SAFE_DISTRIBUTED_ENV}
