"""Push the cu12 image to a real registry on 127.0.0.1:5000 (Debian's docker-registry), pull it by digest,
run the pin checks on what was pulled, and push again to see that no layer is uploaded twice.

The push (about 7.5 GB over loopback, about two minutes when the registry lacks the layers) happens once
in the session, in a session fixture: the only push of the big image (the other registry tests push small
ones). The pulled image is the one the build made: the engine already holds its layers, so the pull by digest downloads
the manifest and config and resolves to the same image ID without re-downloading the layers (it
cannot do otherwise while `pytorch-cuda:v2.9`, which other tests use, keeps them). That the registry
really has the whole image is shown by its own HTTP API: the manifest it serves under the digest
hashes to that digest, names the image's config (its ID) and every layer, and every blob it serves
hashes to its digest (about 3.3 GB read back over loopback).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors
import pytest

from tests.support import local_registry as registry
from tests.support.containers import ImageRunner
from tests.support.integration import record_timing, run_build_py

REPOSITORY = f"{registry.NAMESPACE}/pytorch-cuda"
REMOTE = f"{registry.REGISTRY}/pytorch-cuda"

pytestmark = [pytest.mark.integration, pytest.mark.engine_builds]


@dataclass(frozen=True)
class Pushed:
    result: dict[str, Any]
    seconds: float

    @property
    def digest(self) -> str:
        digests = set(self.result["digests"].values())
        assert len(digests) == 1, self.result["digests"]
        return str(digests.pop())


@pytest.fixture(scope="session")
def pushed(client: docker.DockerClient) -> Pushed:
    registry.require_registry()
    result, seconds = run_build_py("push", "--target", "cu12", "--registry", registry.REGISTRY)
    push_s = result["timings"]["push"]
    record_timing("push_cu12_seconds", push_s)
    uploaded = sum(p["uploaded"] for p in result["push"])
    print(f"\nbuild.py push: {seconds:.1f} s, of which push {push_s} s ({uploaded} layers uploaded)", file=sys.stderr)
    return Pushed(result, seconds)


def test_full_tag_first_then_every_alias_each_with_its_digest(pushed: Pushed) -> None:
    tags = pushed.result["tags"]
    refs = [p["ref"] for p in pushed.result["push"]]
    assert refs == [f"{registry.REGISTRY}/{tag}" for tag in tags]  # the full tag first, the aliases after
    assert refs[0] == f"{REMOTE}:2.9.1-cuda12.8-cudnn9.10-py3.13-runtime"
    assert f"{REMOTE}:v2.9" in refs
    assert pushed.digest.startswith("sha256:")
    assert all(p["uploaded"] == 0 for p in pushed.result["push"][1:])  # the aliases send no layer
    for ref in refs:
        tag = ref.rsplit(":", 1)[1]
        assert registry.manifest(REPOSITORY, tag).served_digest == pushed.digest, ref


def test_the_registry_holds_the_whole_image(pushed: Pushed, client: docker.DockerClient) -> None:
    served = registry.manifest(REPOSITORY, pushed.digest)
    assert served.digest == served.served_digest == pushed.digest
    assert served.config_digest == pushed.result["image_id"]  # the image ID is its config's digest
    local_layers = client.images.get(pushed.result["image_id"]).attrs["RootFS"]["Layers"]
    assert len(served.layers) == len(local_layers)
    for layer in served.layers:
        assert registry.blob_size(REPOSITORY, layer["digest"]) == layer["size"], layer["digest"]
    started = time.monotonic()
    blobs = [served.body["config"], *{layer["digest"]: layer for layer in served.layers}.values()]
    for blob in blobs:  # every byte the registry serves hashes to the digest the manifest names
        assert registry.blob_digest(REPOSITORY, blob["digest"]) == (blob["digest"], blob["size"])
    seconds = time.monotonic() - started
    record_timing("registry_blobs_verified_seconds", round(seconds, 1))
    total = sum(blob["size"] for blob in blobs)
    print(
        f"\nread and hashed {len(blobs)} blobs from the registry: {total / 1e9:.2f} GB in {seconds:.1f} s",
        file=sys.stderr,
    )


def test_pull_by_digest_after_deleting_the_local_registry_tags(pushed: Pushed, client: docker.DockerClient) -> None:
    pinned = f"{REMOTE}@{pushed.digest}"
    for ref in pushed.result["digests"]:
        client.images.remove(ref)  # only the registry-qualified names; pytorch-cuda:v2.9 stays for other tests
    with pytest.raises(docker.errors.ImageNotFound):
        client.images.get(pinned)
    started = time.monotonic()
    pulled = client.images.pull(REMOTE, tag=pushed.digest)
    seconds = time.monotonic() - started
    record_timing("pull_by_digest_seconds", round(seconds, 1))
    print(f"\npull {pinned}: {seconds:.1f} s (layers already here are not downloaded again)", file=sys.stderr)
    assert pulled.id == pushed.result["image_id"]
    assert pinned in client.images.get(pinned).attrs["RepoDigests"]


def test_cpu_conformance_on_the_image_pulled_by_digest(pushed: Pushed, runner: ImageRunner) -> None:
    """The pulled image is the built one (the test above: same image ID), whose whole CPU conformance
    test_image.py runs: here the pin checks run from the digest reference, as a user who pins it would."""
    pinned = f"{REMOTE}@{pushed.digest}"
    finished = runner.conformance(pinned, "-k", "matches_pin")
    assert finished.exit_code == 0, finished.output[-3000:]
    outcomes = finished.outcomes()
    assert outcomes.get("test_torch_version_matches_pin") == "passed", outcomes
    assert not finished.failed()


def test_pushing_again_uploads_no_layer(pushed: Pushed, client: docker.DockerClient) -> None:
    again, seconds = run_build_py("push", "--target", "cu12", "--registry", registry.REGISTRY)
    record_timing("push_again_seconds", again["timings"]["push"])
    print(f"\nsecond build.py push: {seconds:.1f} s, push {again['timings']['push']} s", file=sys.stderr)
    assert again["digests"] == pushed.result["digests"]
    layers = len(set(client.images.get(again["image_id"]).attrs["RootFS"]["Layers"]))  # a layer twice is sent once
    for push in again["push"]:
        assert (push["uploaded"], push["mounted"], push["existing"]) == (0, 0, layers), push
        assert push["previous"] == push["digest"]
