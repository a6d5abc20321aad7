"""A base pinned by digest (`upstream: repo[:tag]@sha256:...` in matrix.yaml) is pulled by that digest from a
real registry and tagged as the local base name; afterwards it is found by its digest without a pull."""

from __future__ import annotations

import contextlib
import uuid

import docker
import docker.errors
import pytest

from pytorch_cuda.engine.build_client import BuildClient
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.matrix import Matrix, load_matrix
from pytorch_cuda.steps.base_image import ensure_base
from tests.integration import registry
from tests.integration.conftest import ROOT, BuiltImage

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix(ROOT / "matrix.yaml")


def test_a_digest_pinned_base_is_pulled_by_its_digest(
    built: BuiltImage, client: docker.DockerClient, matrix: Matrix
) -> None:
    why = registry.answers()
    if why is not None:
        pytest.fail(f"no registry on {registry.REGISTRY_HOST} ({why}): run scripts/setup-registry.sh")
    committed = matrix.bases[matrix.default_base]
    base_id = client.images.get(committed.image).id  # the build's base: the `built` fixture made sure it exists
    suffix = uuid.uuid4().hex[:8]
    remote = f"{registry.REGISTRY}/pin-test-{suffix}"
    local_name = f"pytorch-cuda-pintest/debian:{suffix}"
    client.images.get(base_id).tag(remote, "trixie")
    try:
        pushed = [e for e in client.api.push(remote, tag="trixie", stream=True, decode=True) if "aux" in e]
        digest = pushed[-1]["aux"]["Digest"]
        client.images.remove(f"{remote}:trixie")  # the engine forgets the digest with the last tag of that repo
        pinned = f"{remote}:trixie@{digest}"
        base = committed.model_copy(update={"image": local_name, "upstream": pinned})
        engine = DockerEngine(client, BuildClient("docker-build", ("docker", "build")))
        logged: list[str] = []
        first = ensure_base(engine, base, log=logged.append)
        assert (first.how, first.image_id, first.ref) == ("pulled", base_id, local_name)
        assert any("pulling it by digest" in line for line in logged)
        assert client.images.get(local_name).id == base_id
        again = ensure_base(engine, base, log=logged.append)
        assert (again.how, again.image_id) == ("pinned", base_id)
    finally:
        for ref in (local_name, f"{remote}@{digest}" if "digest" in locals() else None, f"{remote}:trixie"):
            if ref:
                with contextlib.suppress(docker.errors.APIError):
                    client.images.remove(ref)
