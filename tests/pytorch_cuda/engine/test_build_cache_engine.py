"""--verify-reproducible's clean-up on the real engine, on a small image of this test's own names (issue 40).

A build with --no-cache makes a cache record for every step beside the first build's (for a CUDA image, a second
7.5 GB). The engine removes the second build's records, by ID, and leaves the first build's (the next build stays a
cached one), cache mounts and every other build's. Each build leaves one image, the stamped one: the engine's own
(its config has the wall clock) is removed, not left dangling. The RUN command holds a token of this test, so no
other build's records can match it; the test removes its tag and its first build's records when it ends.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import docker
import pytest

from pytorch_cuda.engine.build_cache import cache_records, drop_records
from pytorch_cuda.engine.build_client import find_build_client
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.engine.protocol import EngineBuild
from tests.support.integration import BuiltImage

pytestmark = pytest.mark.integration

LABEL = "dev.pytorch-cuda.test.cache"
EPOCH = 1796083200
SIZE_MB = 1  # one layer this size (an engine that leaks identical rebuilt layers keeps it: support/layer_leak.py)


def _free_gib(engine: DockerEngine) -> float:
    return (engine.free_disk_bytes() or 0) / 1024**3


def test_the_second_builds_records_are_removed_and_the_first_builds_stay(
    built: BuiltImage, client: docker.DockerClient, tmp_path: Path
) -> None:
    token = uuid.uuid4().hex[:12]
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        f"FROM {built.result['base']['ref']}\n"
        f"RUN head -c {SIZE_MB}M /dev/zero > /opt/{token}.bin && touch --date=@{EPOCH} /opt/{token}.bin /opt\n"
    )
    engine = DockerEngine(client, find_build_client())
    tag = f"pytorch-cuda-cachetest:{token}"

    def request(ref: str, *, no_cache: bool) -> EngineBuild:
        return EngineBuild(dockerfile, tmp_path, ref, {LABEL: token}, no_cache=no_cache, created_epoch=EPOCH)

    first_records: list[str] = []
    try:
        first = engine.build(request(tag, no_cache=False), lambda _: None)
        before = engine.build_cache_ids()
        first_records = [r.id for r in cache_records(client).values() if token in r.description]
        assert first_records, "the first build made no cache record of its RUN step"
        free_before = _free_gib(engine)
        second = engine.build(request(f"{tag}-again", no_cache=True), lambda _: None)
        assert second.image_id == first.image_id  # one image ID: the file times are fixed, the config stamped
        engine.untag(f"{tag}-again")
        new = [r.id for r in cache_records(client).values() if r.id not in before and token in r.description]
        assert new, "a --no-cache build should make records of its own"
        free_built = _free_gib(engine)
        removed, reclaimed = engine.drop_build_cache(before, dockerfile)
        left = cache_records(client)
        print(
            f"\nsecond build's records: {len(new)} of this RUN, {removed} removed, {reclaimed / 1e6:.1f} MB "
            f"reclaimed by the engine's count; free {free_before:.2f} -> {free_built:.2f} -> "
            f"{_free_gib(engine):.2f} GiB",
            file=sys.stderr,
        )
        assert removed >= len(new)
        assert not [key for key in new if key in left]  # the second build's records are gone
        assert all(key in left for key in first_records)  # the first build's stay
        # only the stamped image is left of both builds (the engine's own, with the wall clock, are removed)
        assert [image.id for image in client.images.list(filters={"label": f"{LABEL}={token}"})] == [first.image_id]
    finally:
        engine.untag(tag)
        drop_records(client, [r for key, r in cache_records(client).items() if key in first_records])
        os.sync()
