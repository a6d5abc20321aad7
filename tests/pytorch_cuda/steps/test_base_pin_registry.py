"""A base pinned by digest (`upstream: repo[:tag]@sha256:...` in matrix.yaml) is pulled by that digest from a
real registry and tagged as the local base name; afterwards it is found by its digest without a pull."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import docker
import docker.errors
import pytest

from pytorch_cuda.engine.build_client import BuildClient
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.pinned_base import BaseDigestError
from pytorch_cuda.steps.base_image import ensure_base
from tests.support import local_registry as registry
from tests.support.integration import ROOT, BuiltImage

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix(ROOT / "matrix.yaml")


def test_a_digest_pinned_base_is_pulled_by_its_digest(
    built: BuiltImage, client: docker.DockerClient, matrix: Matrix
) -> None:
    registry.require_registry()
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


def test_a_base_of_another_digest_is_refused_and_pin_base_pins_the_one_here(
    client: docker.DockerClient, matrix: Matrix, tmp_path: Path
) -> None:
    """On the real engine: the base here against a pin of another image's digest (the build refuses, naming
    both), then `build.py release pin-base` on a copy of matrix.yaml pins the base here, and it is accepted."""
    committed = matrix.bases[matrix.default_base]
    engine = DockerEngine(client, BuildClient("docker-build", ("docker", "build")))
    here = ensure_base(engine, committed, log=lambda _: None).image_id  # present, else pulled or bootstrapped
    other = "sha256:" + hashlib.sha256(here.encode()).hexdigest()
    with pytest.raises(BaseDigestError) as refused:
        ensure_base(engine, committed.model_copy(update={"digest": other}), log=lambda _: None)
    assert f"is {here}, but matrix.yaml pins {other}" in refused.value.cause
    copy = tmp_path / "matrix.yaml"
    shutil.copy(ROOT / "matrix.yaml", copy)
    pinned = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "release", "pin-base", "--matrix", str(copy), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert pinned.returncode == 0, pinned.stderr
    assert json.loads(pinned.stdout)["digest"] == here
    repinned = load_matrix(copy).bases[matrix.default_base]
    assert repinned.digest == here
    assert ensure_base(engine, repinned, log=lambda _: None).image_id == here
