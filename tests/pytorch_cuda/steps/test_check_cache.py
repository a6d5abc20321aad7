"""The in-image checks' Inductor cache: a new volume (a new CPU or torch) starts cold, and the checks fill it."""

from __future__ import annotations

import time
import uuid

import docker
import pytest

from fault_coverage.image_variants import IMAGE_FAULTS
from pytorch_cuda.engine.build_client import BuildClient
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.matrix.variants import select_variant
from pytorch_cuda.steps.in_image_checks import run_cpu_conformance
from pytorch_cuda.steps.inductor_cache import MOUNT_POINT, InductorCache, host_cache
from tests.support.containers import ImageRunner
from tests.support.docker_cli import docker_run
from tests.support.integration import ROOT, BuiltImage, record_timing

pytestmark = pytest.mark.integration

# The catalogue's fault that removes the C compiler (fault_coverage/image_variants.py).
COMPILER_REMOVED = next(case for case in IMAGE_FAULTS if case.name == "compiler-removed")


def _volume_counts(image: str, volume: str) -> tuple[str, int, int]:
    """The volume's owner, and how many compiled libraries and precompiled headers it holds."""
    listed = docker_run(
        image,
        "sh",
        "-c",
        f"stat -c %U {MOUNT_POINT}; find {MOUNT_POINT} -name '*.so' | wc -l; "
        f"find {MOUNT_POINT}/precompiled_headers -name '*.gch' 2>/dev/null | wc -l",
        options=("-v", f"{volume}:{MOUNT_POINT}"),
    )
    owner, compiled, headers = listed.output.split()
    return owner, int(compiled), int(headers)


def _is_warm(image: str, volume: str) -> bool:
    _, compiled, headers = _volume_counts(image, volume)
    return compiled >= 2 and headers >= 1


def test_a_cold_cache_volume_passes_and_is_filled(built: BuiltImage, client: docker.DockerClient) -> None:
    cache = InductorCache(f"pytorch-cuda-inductor-test-{uuid.uuid4().hex[:12]}")  # what a new CPU or torch gets
    engine = DockerEngine(client, BuildClient("docker-build", ("docker", "build")))
    try:
        started = time.monotonic()
        report = run_cpu_conformance(engine, built.ref, cache)
        record_timing("checks_cold_cache_seconds", round(time.monotonic() - started, 1))
        assert report.passed, f"{report.counts} {report.failures} {report.output_tail}"
        owner, compiled, headers = _volume_counts(built.ref, cache.volume)
        assert owner == "torch"  # a new volume takes the image's directory's owner
        assert compiled >= 2, f"the ISA probe programs and kernels should be in the volume: {compiled}"
        # the compile probe's precompiled C++ header, compiled once per volume rather than in every container
        assert headers >= 1, f"the precompiled header should be in the volume: {headers}"
    finally:
        client.volumes.get(cache.volume).remove(force=True)


def test_a_warm_cache_does_not_hide_a_missing_compiler(
    built: BuiltImage, client: docker.DockerClient, runner: ImageRunner
) -> None:
    """The gate with the build's own (warm) volume still fails an image whose C++ compiler is gone."""
    cache = host_cache(select_variant(load_matrix(ROOT / "matrix.yaml"), "cu12").torch_version)
    engine = DockerEngine(client, BuildClient("docker-build", ("docker", "build")))
    if not _is_warm(built.ref, cache.volume):  # the build's checks fill it; an engine pruned since then has not
        assert run_cpu_conformance(engine, built.ref, cache).passed
    assert _is_warm(built.ref, cache.volume)
    broken = runner.derive(built.ref, f"USER root\n{COMPILER_REMOVED.injection.image_variant}\nUSER torch")
    report = run_cpu_conformance(engine, broken, cache)
    failed = "\n".join(report.failures)
    assert not report.passed, report.output_tail
    for name in ("test_c_compiler_builds_against_python_h", "test_openmp_and_cpu_vector_isa"):
        assert name in failed, f"{name} should fail without a compiler: {failed}"
    assert "test_inductor_cpu_generates_cpp_and_matches_eager" in failed, f"cached kernels hid it: {failed}"
