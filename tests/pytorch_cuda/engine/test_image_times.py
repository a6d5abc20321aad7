"""The config stamp (issue 40): BuildKit 0.8 writes the wall clock into the config; the engine rewrites its times
to the commit's and loads the new config alone (the layers are already there)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile

from pytorch_cuda.engine.image_times import config_only_tar, stamp_config

CONFIG = {
    "architecture": "amd64",
    "created": "2026-12-06T02:41:07.123456789Z",
    "config": {"Labels": {"org.opencontainers.image.revision": "abc"}},
    "history": [
        {"created": "2026-12-06T01:39:14.0Z", "created_by": "mmdebstrap"},
        {"created": "2026-12-06T02:40:59.5Z", "created_by": "RUN apt-get install", "empty_layer": False},
    ],
    "rootfs": {"type": "layers", "diff_ids": ["sha256:aa", "sha256:bb"]},
}


def test_every_time_of_the_config_becomes_the_epoch_and_nothing_else_changes() -> None:
    stamped = json.loads(stamp_config(json.dumps(CONFIG).encode(), 1796515200))
    assert stamped["created"] == "2026-12-06T00:00:00Z"
    assert [entry["created"] for entry in stamped["history"]] == ["2026-12-06T00:00:00Z"] * 2
    unstamped = {**stamped, "created": CONFIG["created"], "history": CONFIG["history"]}
    assert unstamped == CONFIG


def test_two_builds_that_differ_only_in_their_clock_get_one_config() -> None:
    later = {**CONFIG, "created": "2026-12-07T09:00:00Z"}
    first = stamp_config(json.dumps(CONFIG, indent=2).encode(), 1796515200)
    second = stamp_config(json.dumps(later).encode(), 1796515200)
    assert first == second  # canonical JSON: key order and spacing of the engine's config do not matter
    assert stamp_config(first, 1796515200) == first
    assert stamp_config(first, 1796515201) != first


def test_the_load_tar_holds_the_config_under_its_digest_and_names_every_layer() -> None:
    config = stamp_config(json.dumps(CONFIG).encode(), 1796515200)
    with tarfile.open(fileobj=io.BytesIO(config_only_tar(config, 2))) as tar:
        names = tar.getnames()
        name = hashlib.sha256(config).hexdigest() + ".json"
        assert names == [name, "manifest.json"]  # no layer: the engine has them by chain ID
        assert tar.extractfile(name).read() == config  # type: ignore[union-attr]
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert manifest == [{"Config": name, "RepoTags": None, "Layers": ["0/layer.tar", "1/layer.tar"]}]
