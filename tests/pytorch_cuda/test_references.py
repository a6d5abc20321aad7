"""Image references with registry ports, tags and digests; the engine's pull gets them split right."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.engine.build_client import BuildClient
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.errors import MatrixError, UserError
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.matrix.tags import TagSet
from pytorch_cuda.references import ImageReference, InvalidReferenceError, parse_reference
from pytorch_cuda.steps.remote_names import cache_ref, parse_registry, remote_tags

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("debian", ImageReference("debian")),
        ("pytorch-cuda:v2.9", ImageReference("pytorch-cuda", "v2.9")),
        ("127.0.0.1:5000/ci/pytorch-cuda", ImageReference("127.0.0.1:5000/ci/pytorch-cuda")),
        ("127.0.0.1:5000/ci/pytorch-cuda:v2.9", ImageReference("127.0.0.1:5000/ci/pytorch-cuda", "v2.9")),
        (f"debian@{DIGEST}", ImageReference("debian", None, DIGEST)),
        (
            f"docker.io/library/debian:trixie-slim@{DIGEST}",
            ImageReference("docker.io/library/debian", "trixie-slim", DIGEST),
        ),
        (f"localhost:5000/x@{DIGEST}", ImageReference("localhost:5000/x", None, DIGEST)),
    ],
)
def test_parse_reference(text: str, expected: ImageReference) -> None:
    assert parse_reference(text) == expected
    assert str(expected) == text


def test_pinned_and_pull_args() -> None:
    pinned = parse_reference(f"docker.io/library/debian:trixie-slim@{DIGEST}")
    assert pinned.pinned == f"docker.io/library/debian@{DIGEST}"
    assert pinned.pull_args == ("docker.io/library/debian", DIGEST)
    assert parse_reference("127.0.0.1:5000/ci/x").pull_args == ("127.0.0.1:5000/ci/x", "latest")
    assert parse_reference("x:1").lookup == "x:1"


@pytest.mark.parametrize(
    "text", ["debian@sha256:abc", "Debian:trixie", "debian:tri xie", "debian:", "/debian", "a//b", "x@md5:" + "a" * 32]
)
def test_bad_references_say_which_part(text: str) -> None:
    with pytest.raises(InvalidReferenceError):
        parse_reference(text)


class _Images:
    def __init__(self) -> None:
        self.pulled: list[tuple[str, str]] = []

    def pull(self, repository: str, tag: str) -> None:
        self.pulled.append((repository, tag))


class _Client:
    def __init__(self) -> None:
        self.images = _Images()

    def info(self) -> dict[str, Any]:
        return {}


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (f"docker.io/library/debian:trixie-slim@{DIGEST}", ("docker.io/library/debian", DIGEST)),
        (f"127.0.0.1:5000/ci/debian@{DIGEST}", ("127.0.0.1:5000/ci/debian", DIGEST)),
        ("127.0.0.1:5000/ci/debian", ("127.0.0.1:5000/ci/debian", "latest")),
        ("docker.io/library/debian:trixie-slim", ("docker.io/library/debian", "trixie-slim")),
    ],
)
def test_engine_pull_splits_digests_and_ports(ref: str, expected: tuple[str, str]) -> None:
    """Splitting at the last ':' (the old way) pulled 'debian:trixie-slim@sha256' with the hex as its tag."""
    client = _Client()
    engine = DockerEngine(client, BuildClient("docker-build", ("docker", "build")))
    assert engine.pull(ref) is None
    assert client.images.pulled == [expected]


def test_matrix_accepts_a_digest_pinned_upstream(tmp_path: Path, matrix_text: str) -> None:
    pinned = f"docker.io/library/debian:trixie-slim@{DIGEST}"
    text = matrix_text.replace("upstream: docker.io/library/debian:trixie-slim", f"upstream: {pinned}")
    assert pinned in text
    (tmp_path / "matrix.yaml").write_text(text)
    assert load_matrix(tmp_path / "matrix.yaml").bases["trixie"].upstream == pinned


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (f"pytorch-cuda-base/debian@{DIGEST}", "pin the digest on 'upstream'"),
        ("pytorch-cuda-base/debian@sha256:1234", "is not sha256:<64"),
    ],
)
def test_matrix_rejects_a_digest_on_the_local_name(tmp_path: Path, matrix_text: str, image: str, message: str) -> None:
    text = matrix_text.replace("image: pytorch-cuda-base/debian:trixie", f"image: {image}")
    (tmp_path / "matrix.yaml").write_text(text)
    with pytest.raises(MatrixError) as info:
        load_matrix(tmp_path / "matrix.yaml")
    assert message in info.value.paragraph(width=10_000)


def test_registry_names() -> None:
    tags = TagSet("pytorch-cuda", "2.9.1-x", ("v2.9",))
    registry = parse_registry("127.0.0.1:5000/ci/")
    assert registry == "127.0.0.1:5000/ci"
    assert remote_tags(tags, registry).all_refs == (
        "127.0.0.1:5000/ci/pytorch-cuda:2.9.1-x",
        "127.0.0.1:5000/ci/pytorch-cuda:v2.9",
    )
    assert cache_ref(tags, registry, "cu128-runtime") == "127.0.0.1:5000/ci/pytorch-cuda:buildcache-cu128-runtime"
    assert parse_registry("ghcr.io/my-org") == "ghcr.io/my-org"


@pytest.mark.parametrize("value", ["ci", "my-user/ns", "127.0.0.1:5000/CI", "https://ghcr.io/x"])
def test_registry_without_a_host_is_refused(value: str) -> None:
    with pytest.raises(UserError, match="--registry"):
        parse_registry(value)


def test_a_pinned_upstream_renders_into_the_manifest_not_the_dockerfile(
    tmp_path: Path, matrix_text: str, root: Path
) -> None:
    """Pinning is a matrix change like any other: re-rendered, the manifest records the pin; the
    Dockerfile builds FROM the local name, which the build points at the pinned image."""
    from pytorch_cuda.matrix.variants import select_variant
    from pytorch_cuda.render import render_variant

    pinned = f"docker.io/library/debian:trixie-slim@{DIGEST}"
    (tmp_path / "matrix.yaml").write_text(
        matrix_text.replace("upstream: docker.io/library/debian:trixie-slim", f"upstream: {pinned}")
    )
    matrix = load_matrix(tmp_path / "matrix.yaml")
    files = {f.path.name: f.content for f in render_variant(matrix, select_variant(matrix, "cu12"), root / "templates")}
    assert f'"upstream": "{pinned}"' in files["manifest.json"]
    assert "ARG BASE_IMAGE=pytorch-cuda-base/debian:trixie\n" in files["Dockerfile"]
