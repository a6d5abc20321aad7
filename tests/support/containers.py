"""Run commands in images and build small derived images, removing everything afterwards."""

from __future__ import annotations

import contextlib
import io
import uuid
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import docker
import docker.errors
import requests.exceptions

from pytorch_cuda.engine.docker_engine import read_container_file
from pytorch_cuda.steps.in_image_checks import RESULTS_PATH
from pytorch_cuda_contract.results_file import ConformanceResults, parse_results

# the CPU checks as a user runs them in the image (ImageRunner.conformance; the cold run of tests/images/test_image.py)
CPU_CONFORMANCE = ("conformance", "-m", "cpu", "-q", "-rfE")


@dataclass(frozen=True)
class Finished:
    exit_code: int
    output: str
    results: ConformanceResults | None

    def outcomes(self) -> dict[str, str]:
        """Conformance results: test function name (parameters kept) -> outcome."""
        return self.results.outcomes() if self.results else {}

    def failed(self) -> set[str]:
        return {name for name, outcome in self.outcomes().items() if outcome in ("failed", "error")}


class ImageRunner:
    """Like docker-stacks' TrackedContainer: every container and derived image is removed on exit."""

    def __init__(self, client: docker.DockerClient) -> None:
        self.client = client
        self._images: list[str] = []

    def __enter__(self) -> ImageRunner:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        for ref in self._images:
            with contextlib.suppress(docker.errors.APIError):
                self.client.images.remove(ref, force=True)

    def run(
        self,
        image: str,
        command: list[str],
        *,
        shm_size: str = "1g",
        environment: dict[str, str] | None = None,
        timeout_s: float = 1200,
        results_path: str | None = None,
    ) -> Finished:
        container = self.client.containers.run(
            image, command, detach=True, shm_size=shm_size, environment=environment or {}
        )
        try:
            try:
                exit_code = int(container.wait(timeout=timeout_s)["StatusCode"])
            except requests.exceptions.RequestException:
                container.kill()
                raise TimeoutError(f"{command} in {image} ran past {timeout_s} s") from None
            output = container.logs().decode("utf-8", "replace")
            raw = read_container_file(container, results_path) if results_path else None
            results = parse_results(raw, source=f"{image}:{results_path}") if raw else None
        finally:
            container.remove(force=True)
        return Finished(exit_code, output, results)

    def conformance(self, image: str, *args: str, **kwargs: Any) -> Finished:
        return self.run(
            image,
            ["conformance", "-m", "cpu", "-q", "-rfE", *args],
            results_path=RESULTS_PATH,
            **kwargs,
        )

    def derive(self, base: str, instructions: str) -> str:
        """Build a small image FROM base with extra Dockerfile instructions (a broken variant)."""
        ref = f"pytorch-cuda-broken:{uuid.uuid4().hex[:10]}"
        dockerfile = f"FROM {base}\n{instructions.strip()}\n".encode()
        self.client.images.build(fileobj=io.BytesIO(dockerfile), tag=ref, rm=True, forcerm=True)
        self._images.append(ref)
        return ref
