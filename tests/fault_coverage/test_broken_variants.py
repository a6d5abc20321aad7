"""Broken variants of the real image: each must make the conformance check that guards it fail.

Every case derives a small image from the real cu12 image (or runs it with a
broken setting), runs the suite's CPU checks in it, and asserts that the named
checks fail while a control check still passes, so a failure is the right one.
"""

from __future__ import annotations

import dataclasses
import io
import tarfile
from pathlib import Path
from typing import Any

import docker
import pytest

from fault_coverage.image_variants import IMAGE_FAULTS, SITE
from pytorch_cuda.engine.build_client import find_build_client
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.errors import ChecksFailedError
from pytorch_cuda.image_build.build_plan import make_plan
from pytorch_cuda.image_build.pipeline import PipelineHooks, execute
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.matrix.labels import BuildFacts
from pytorch_cuda.matrix.tags import TagSet
from pytorch_cuda.matrix.variants import select_variant
from tests.support.containers import ImageRunner
from tests.support.integration import ROOT, BuiltImage
from tests.support.layers import layer_dirs, private_certificates, scan_layer_dirs, scan_saved_image

pytestmark = pytest.mark.integration

CONTROL = "test_cuda_runtime_matches_pin"

# The broken variants are faults of the catalogue (fault_coverage/image_variants.py): each names its Dockerfile
# instructions (run as root on top of the image), its `-k` selection and the checks it must trip.
DERIVED = {case.name: case for case in IMAGE_FAULTS}

# name -> (docker run settings, `-k` selection, checks that must fail)
RUN_SETTINGS: dict[str, tuple[dict[str, Any], str, set[str]]] = {
    "tiny /dev/shm (Docker's 64 MB default)": ({"shm_size": "64m"}, "shm", {"test_dev_shm_is_large_enough"}),
}


def _assert_caught(finished_failed: set[str], outcomes: dict[str, str], expected: set[str], output: str) -> None:
    assert expected <= finished_failed, f"expected {sorted(expected)} to fail; outcomes {outcomes}\n{output[-2500:]}"
    assert outcomes.get(CONTROL) == "passed", f"control check did not pass: {outcomes}"


@pytest.mark.parametrize("case", sorted(DERIVED))
def test_derived_breakage_is_caught(case: str, built: BuiltImage, runner: ImageRunner) -> None:
    variant = DERIVED[case]
    broken = runner.derive(built.ref, f"USER root\n{variant.injection.image_variant}\nUSER torch")
    finished = runner.conformance(broken, "-k", f"{variant.select} or {CONTROL}")
    assert finished.exit_code != 0, finished.output[-2000:]
    _assert_caught(finished.failed(), finished.outcomes(), set(variant.trips), finished.output)


@pytest.mark.parametrize("case", sorted(RUN_SETTINGS))
def test_runtime_breakage_is_caught(case: str, built: BuiltImage, runner: ImageRunner) -> None:
    settings, selection, expected = RUN_SETTINGS[case]
    finished = runner.conformance(built.ref, "-k", f"{selection} or {CONTROL}", **settings)
    assert finished.exit_code != 0, finished.output[-2000:]
    _assert_caught(finished.failed(), finished.outcomes(), expected, finished.output)


def test_deleted_cudnn_fails_the_suite(built: BuiltImage, runner: ImageRunner) -> None:
    broken = runner.derive(built.ref, f"USER root\nRUN rm -f {SITE}/nvidia/cudnn/lib/libcudnn.so.9\nUSER torch")
    finished = runner.conformance(broken, "-k", "cudnn")
    assert finished.exit_code != 0
    assert "libcudnn" in finished.output or "test_cudnn_matches_pin" in finished.failed(), finished.output[-2000:]


def test_failed_checks_move_no_tag_on_the_real_engine(built: BuiltImage, client: docker.DockerClient) -> None:
    """A candidate whose manifest lies fails its in-image checks: the old alias stays, nothing new is tagged."""
    repository = "pytorch-cuda-gatetest"
    old_id = client.images.get("pytorch-cuda-base/debian:trixie").id
    client.images.get(old_id).tag(repository, "alias")
    context = ROOT / "build-output" / "gatetest"
    context.mkdir(parents=True, exist_ok=True)
    (context / "Dockerfile").write_text(
        f"FROM {built.ref}\nUSER root\nRUN sed -i 's/2.9.1+cu128/2.9.0+cu128/' /etc/pytorch-cuda/manifest.json\n"
        "USER torch\n"
    )
    matrix = load_matrix(ROOT / "matrix.yaml")
    plan = make_plan(
        matrix,
        select_variant(matrix, "cu12"),
        root=ROOT,
        facts=BuildFacts("test", "2026-01-01T00:00:00Z"),
        build_id="gatetest",
        ca_bundle=None,
        ca_source=None,
    )
    plan = dataclasses.replace(
        plan,
        dockerfile=context / "Dockerfile",
        context=context,
        tags=TagSet(repository, "full", ("alias",)),
        candidate=f"{repository}:candidate",
    )
    hooks = PipelineHooks(log=lambda _: None, progress=lambda _: None, index_probe=lambda: None, log_dir=context)
    try:
        with pytest.raises(ChecksFailedError, match="test_torch_version_matches_pin"):
            execute(plan, DockerEngine(client, find_build_client()), hooks)
        assert client.images.get(f"{repository}:alias").id == old_id
        tags = {tag for image in client.images.list(repository) for tag in image.tags}
        assert {tag for tag in tags if tag.startswith(f"{repository}:")} == {f"{repository}:alias"}
    finally:
        for image in client.images.list(repository):
            for tag in image.tags:
                if tag.startswith(f"{repository}:"):  # the base image keeps its own tag
                    client.images.remove(tag)


# Each way the host's certificates could end up in a layer, in a file named for it; the copy is deleted by a
# later layer, so it is in no container's filesystem, only in its layer.
LEAKS = (
    "COPY bundle.pem /usr/local/share/leaked.pem",
    "RUN cd /usr/local/share && (echo 'an extra line'; cat leaked.pem) > appended.txt"
    " && grep -v -- '-----' leaked.pem > bare-base64.txt"
    " && (printf '\\000\\001\\002'; cat leaked.pem) > embedded.bin && rm leaked.pem",
)
LEAKED_FILES = ("leaked.pem", "appended.txt", "bare-base64.txt", "embedded.bin")


def test_ca_scanners_find_a_planted_bundle(client: docker.DockerClient, ca_bundle: Path | None) -> None:
    """The CA check can fail: the bundle, or its certificates, in a layer are found by both scanners (the engine's
    layer directories, used for the big image, and `docker save`, for engines whose layers cannot be read)."""
    assert ca_bundle is not None
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as archive:
        dockerfile = "\n".join(("FROM pytorch-cuda-base/debian:trixie", *LEAKS, "")).encode()
        for name, data in (("Dockerfile", dockerfile), ("bundle.pem", ca_bundle.read_bytes())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    context.seek(0)
    image, _ = client.images.build(fileobj=context, custom_context=True, tag="pytorch-cuda-broken:leaked-ca", rm=True)
    try:
        bundle = ca_bundle.read_bytes()
        needles = private_certificates(bundle, b"")
        dirs = layer_dirs(client, "pytorch-cuda-broken:leaked-ca")
        assert dirs is not None, "the engine's overlay2 layer directories are not readable here"
        for found in (
            scan_layer_dirs(dirs, whole_file=bundle, needles=needles),
            scan_saved_image(client, "pytorch-cuda-broken:leaked-ca", whole_file=bundle, needles=needles),
        ):
            for name in LEAKED_FILES:
                assert any(name in hit for hit in found.hits), (found.method, name, found.hits)
            assert any("leaked.pem" in hit and "byte-identical" in hit for hit in found.hits), found.hits
        assert "leaked.pem" not in str(image.attrs["Config"])  # nothing but the layers holds it
    finally:
        client.images.remove(image.id, force=True)
