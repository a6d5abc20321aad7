"""The engine's push stream: digest, each layer's last status, errors sorted into retry-worthy and not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytorch_cuda.engine.build_client import (
    BUILDX_DOCKER_DRIVER_NO_CACHE_EXPORT,
    BuildClient,
)
from pytorch_cuda.engine.engine_push import read_push_stream, registry_error
from pytorch_cuda.engine.protocol import EngineBuild, RegistryError, TransientRegistryError

DIGEST = "sha256:" + "7b" * 32
REF = "127.0.0.1:5000/ci/pytorch-cuda:v2.9"


def _stream(*statuses: tuple[str, str]) -> list[dict[str, object]]:
    events: list[dict[str, object]] = [{"status": "The push refers to repository [127.0.0.1:5000/ci/pytorch-cuda]"}]
    events += [{"status": status, "id": layer, "progressDetail": {}} for layer, status in statuses]
    events += [{"status": f"v2.9: digest: {DIGEST} size: 529"}, {"aux": {"Tag": "v2.9", "Digest": DIGEST}}]
    return events


def test_digest_and_last_status_per_layer() -> None:
    events = _stream(
        ("aaa", "Preparing"),
        ("bbb", "Preparing"),
        ("aaa", "Pushing"),
        ("aaa", "Pushed"),
        ("bbb", "Layer already exists"),
        ("ccc", "Mounted from ci/other"),
    )
    result = read_push_stream(REF, events, lambda _: None)
    assert result.digest == DIGEST
    assert dict(result.layers) == {"aaa": "Pushed", "bbb": "Layer already exists", "ccc": "Mounted from ci/other"}
    assert (result.count("Pushed"), result.count("Layer already exists"), result.count("Mounted from")) == (1, 1, 1)


def test_progress_lines_name_layers_and_bytes() -> None:
    ticks = iter(float(t) for t in range(0, 1000, 40))
    events: list[dict[str, object]] = [
        {"status": "Pushing", "id": "aaa", "progressDetail": {"current": 1_000_000_000, "total": 4_000_000_000}},
        {"status": "Pushed", "id": "bbb", "progressDetail": {}},
        {"aux": {"Digest": DIGEST}},
    ]
    lines: list[str] = []
    read_push_stream(REF, events, lines.append, clock=lambda: next(ticks))
    assert lines[0] == f"pushing {REF}: 0 of 1 layers done; sending 1 (1.00 of 4.00 GB read)"


@pytest.mark.parametrize(
    ("message", "transient"),
    [
        ("received unexpected HTTP status: 503 Service Unavailable", True),
        ("Get http://127.0.0.1:5000/v2/: dial tcp 127.0.0.1:5000: connect: connection refused", True),
        ("net/http: TLS handshake timeout", True),
        ("toomanyrequests: rate limit", True),
        ("unexpected EOF", True),
        ("unauthorized: authentication required", False),
        ("denied: requested access to the resource is denied", False),
        ("An image does not exist locally with the tag: 127.0.0.1:5000/ci/x", False),
        ("http: server gave HTTP response to HTTPS client", False),
    ],
)
def test_errors_are_sorted_into_transient_and_not(message: str, transient: bool) -> None:
    error = registry_error(message)
    assert isinstance(error, RegistryError)
    assert isinstance(error, TransientRegistryError) is transient
    events: Iterator[dict[str, object]] = iter([{"errorDetail": {"message": message}, "error": message}])
    with pytest.raises(TransientRegistryError if transient else RegistryError):
        read_push_stream(REF, events, lambda _: None)


def test_a_stream_without_a_digest_is_an_error() -> None:
    with pytest.raises(RegistryError, match="no digest"):
        read_push_stream(REF, [{"status": "Pushed", "id": "a"}], lambda _: None)


def test_registry_cache_flags_only_where_the_client_exports_it() -> None:
    request = EngineBuild(
        dockerfile=Path("Dockerfile"),
        context=Path("."),
        tag="x:candidate",
        labels={},
        cache_from=("r/x:buildcache-v",),
        cache_to=("r/x:buildcache-v",),
    )
    container_builder = BuildClient("buildx", ("docker", "buildx", "build", "--load"), registry_cache_gap=None)
    argv = container_builder.command(request)
    assert argv[argv.index("--cache-from") + 1] == "type=registry,ref=r/x:buildcache-v"
    assert argv[argv.index("--cache-to") + 1] == "type=registry,ref=r/x:buildcache-v,mode=max"
    docker_driver = BuildClient(
        "buildx", ("docker", "buildx", "build"), registry_cache_gap=BUILDX_DOCKER_DRIVER_NO_CACHE_EXPORT
    )
    legacy = BuildClient("docker-build", ("docker", "build"), {"DOCKER_BUILDKIT": "1"})
    for client in (docker_driver, legacy):
        assert "--cache-to" not in client.command(request)
        assert "--cache-from" not in client.command(request)
    assert legacy.registry_cache_gap is not None
    assert "20.10" in legacy.registry_cache_gap
