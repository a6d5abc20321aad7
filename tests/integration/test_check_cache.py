"""The in-image checks' Inductor cache: a new volume (a new CPU or torch) starts cold, and the checks fill it."""

from __future__ import annotations

import time
import uuid

import docker

from pytorch_cuda.engine.build_client import BuildClient
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.steps.in_image_checks import run_cpu_conformance
from pytorch_cuda.steps.inductor_cache import MOUNT_POINT, InductorCache
from tests.integration.conftest import BuiltImage, record_timing
from tests.integration.docker_cli import docker_run


def test_a_cold_cache_volume_passes_and_is_filled(built: BuiltImage, client: docker.DockerClient) -> None:
    cache = InductorCache(f"pytorch-cuda-inductor-test-{uuid.uuid4().hex[:12]}")  # what a new CPU or torch gets
    engine = DockerEngine(client, BuildClient("docker-build", ("docker", "build")))
    try:
        started = time.monotonic()
        report = run_cpu_conformance(engine, built.ref, cache)
        record_timing("checks_cold_cache_seconds", round(time.monotonic() - started, 1))
        assert report.passed, f"{report.counts} {report.failures} {report.output_tail}"
        listed = docker_run(
            built.ref,
            "sh",
            "-c",
            f"stat -c %U {MOUNT_POINT}; find {MOUNT_POINT} -name '*.so' | wc -l",
            options=("-v", f"{cache.volume}:{MOUNT_POINT}"),
        )
        owner, compiled = listed.output.split()
        assert owner == "torch", listed.output  # a new volume takes the image's directory's owner
        assert int(compiled) >= 2, f"the ISA probe programs and kernels should be in the volume: {listed.output}"
    finally:
        client.volumes.get(cache.volume).remove(force=True)
