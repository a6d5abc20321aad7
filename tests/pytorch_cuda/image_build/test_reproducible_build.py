"""Two cold builds of one commit give one image ID (issue 40), on the real engine, leaving nothing on its disk.

`build.py build --target cu12 --verify-reproducible-apart --skip-checks`: after the tier's own build (the `built`
fixture, reused), the cu12 runtime is built twice with --no-cache at a file time of its own (matrix.yaml's
SOURCE_DATE_EPOCH plus one second, on the same base), the first image and its build cache records removed before
the second build starts, so the second runs on an empty build cache for its steps (asserted: no step cached but
the base's FROM and BuildKit's own). It asserts one image ID for the pair, that it is not the tier's image (no
layer of the pair equals one the engine holds, so Docker 20.10 keeps none of it: tests/support/layer_leak.py), and
that once the pair is gone no layer directory holds a file of the pair's time.

Cost: two cold builds, in the builds lane of scripts/test-lanes.sh beside the images lane (measured on this shared
2-core machine: 180 s alone, 218 s in the lanes).
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile

import docker
import pytest

from pytorch_cuda.image_build.reproducible import APART_SHIFT_SECONDS
from pytorch_cuda.matrix.build_matrix import load_matrix
from tests.support.integration import ROOT, BuiltImage, record_timing, run_build_py
from tests.support.layer_leak import layer_dirs_holding, overlay_root

pytestmark = [pytest.mark.integration, pytest.mark.engine_builds]


# It runs in every tier. Two causes of a pair that differed are gone: uv's parallel bytecode compile (a .pyc's
# bytes followed the load: images/bin/compile-bytecode now) and, the likely cause of 2026-12-06's CI pair (apt
# layer, dpkg record and SBOM differing together), a package list that failed to download (plain `apt-get update`
# kept the cache mount's older one: --error-on=any now). PYTORCH_CUDA_TEST_REPRODUCIBLE_APART=0
# leaves it out of a local run (two cold builds, about 3 minutes).
APART_VARIABLE = "PYTORCH_CUDA_TEST_REPRODUCIBLE_APART"


@pytest.mark.skipif(
    os.environ.get(APART_VARIABLE) == "0",
    reason=f"{APART_VARIABLE}=0 leaves out the two cold builds (about 3 minutes)",
)
def test_two_builds_from_scratch_give_one_image_id_and_leave_nothing(
    built: BuiltImage, client: docker.DockerClient
) -> None:
    git = ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"]
    commit_time = int(subprocess.run(git, capture_output=True, text=True, check=True).stdout)
    pair_time = load_matrix(ROOT / "matrix.yaml").project.source_date_epoch + APART_SHIFT_SECONDS
    overlay = overlay_root(client)
    before = set(layer_dirs_holding(overlay, pair_time)) if overlay else set()  # an earlier run's, killed midway
    result, seconds = run_build_py("build", "--target", "cu12", "--verify-reproducible-apart", "--skip-checks")
    [check] = result["reproducibility"]
    record_timing("verify_reproducible_apart_cu12_seconds", round(seconds, 1))
    record_timing("cold_second_build_cu12_seconds", check["second_build_seconds"])
    assert check["mode"] == "apart"
    # cold: every RUN ran again. --no-cache still reports two steps CACHED that make no layer of the Dockerfile's:
    # the base's FROM and BuildKit's "[internal] settings cache mount permissions" (measured: 2/26)
    cached, total = map(int, check["second_build_cached_steps"].split("/"))
    assert cached <= 2, check
    assert total >= 20, check
    assert (check["source_date_epoch"], check["created_epoch"]) == (pair_time, commit_time)
    assert check["differences"] == []
    assert check["first"] == check["second"] != built.result["image_id"], check
    assert check["second_build_cache_removed"]["records"] >= 20, check  # both builds' records are gone again
    with pytest.raises(docker.errors.ImageNotFound):
        client.images.get(check["second"])
    if overlay is not None:  # the pair's layers went with it: no directory holds a file of its time
        assert set(layer_dirs_holding(overlay, pair_time)) - before == set()


def test_the_files_of_the_last_layer_carry_the_file_time(built: BuiltImage, client: docker.DockerClient) -> None:
    """The SBOM's layer (the image's last) holds /etc/pytorch-cuda and its SBOM, both at matrix.yaml's time."""
    file_time = load_matrix(ROOT / "matrix.yaml").project.source_date_epoch
    container = client.containers.create(built.ref, "true")
    try:
        stream, _ = container.get_archive("/etc/pytorch-cuda/sbom.cdx.json")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            [member] = tar.getmembers()
    finally:
        container.remove()
    assert member.mtime == file_time
