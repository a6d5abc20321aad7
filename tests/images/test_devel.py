"""The devel flavour for real: a CUDA extension built with torch.utils.cpp_extension inside it (no GPU needed).

devel exists for CUDA 13 targets only (the CUDA 12 nvcc wheels carry no nvcc), and cu130 comes from
download.pytorch.org: where that index is unreachable, this module skips and says so.
"""

from __future__ import annotations

import sys

import docker
import pytest

from pytorch_cuda.errors import EngineError
from pytorch_cuda.network.index_probe import probe_index
from tests.support.docker_cli import docker_run
from tests.support.integration import ROOT, BuiltImage, record_timing, run_build_py

pytestmark = [pytest.mark.integration, pytest.mark.engine_builds]

CU130_INDEX = "https://download.pytorch.org/whl/cu130"


@pytest.fixture(scope="module")
def devel(client: docker.DockerClient) -> BuiltImage:
    try:
        probe_index(CU130_INDEX, None, timeout_s=10)
    except EngineError:
        pytest.skip(f"{CU130_INDEX} is unreachable here, so the cu130 images (and devel) cannot be built")
    result, seconds = run_build_py("--target", "cu13", "--flavour", "devel")
    runtime = result["built_first"][0]
    growth = result["size_bytes"] / runtime["size_bytes"] - 1
    record_timing("devel_over_runtime", {"bytes": result["size_bytes"] - runtime["size_bytes"], "ratio": growth})
    print(f"\ndevel: {result['size_bytes'] / 1e9:.2f} GB, +{growth:.1%} over the runtime", file=sys.stderr)
    return BuiltImage(result["tags"][0], result, seconds)


def test_devel_adds_at_most_5_percent(devel: BuiltImage) -> None:
    runtime = devel.result["built_first"][0]
    assert devel.result["size_bytes"] <= runtime["size_bytes"] * 1.05


def test_one_toolkit_only(devel: BuiltImage) -> None:
    ran = docker_run(
        devel.ref,
        "sh",
        "-c",
        "test ! -e /usr/local/cuda && echo no-usr-local-cuda; "
        "find / -xdev -name 'libcudart.so.*' -not -path '/opt/pytorch-cuda/cuda/*' 2>/dev/null | wc -l; "
        "nvcc --version | tail -2",
    )
    lines = ran.output.split("\n")
    assert lines[0] == "no-usr-local-cuda"
    assert lines[1].strip() == "1"  # the one from the nvidia-cuda-runtime wheel torch uses
    assert "release 13.0" in ran.output


def test_cuda_extension_builds_inside(devel: BuiltImage) -> None:
    ran = docker_run(
        devel.ref,
        "python",
        "/examples/cuda_extension/build_and_run.py",
        options=("-v", f"{ROOT / 'examples'}:/examples:ro", "-e", "TORCH_CUDA_ARCH_LIST=8.0;9.0"),
        timeout_s=900,
    )
    assert ran.code == 0, ran.output[-3000:]
    assert "CUDA_HOME /opt/pytorch-cuda/cuda" in ran.output
    assert "pytorch_cuda_scale_add.so" in ran.output
    assert "no GPU visible: the extension built and imported" in ran.output
