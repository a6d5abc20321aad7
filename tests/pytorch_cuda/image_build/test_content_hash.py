"""The content hash a GPU result is keyed on: layers, run config and the suite, and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.errors import UserError
from pytorch_cuda.image_build.content_hash import ImageContent, content_hash, hash_image, image_content

ROOT = Path(__file__).resolve().parents[3]
LAYERS = (f"sha256:{'a' * 64}", f"sha256:{'b' * 64}")
CONFIG = {"Env": ["PATH=/opt/pytorch/bin:/usr/bin"], "Entrypoint": ["tini", "--"], "Cmd": ["bash"], "User": "1000"}
SUITE = "c" * 64


def inspect(layers: tuple[str, ...] = LAYERS, **config: Any) -> dict[str, Any]:
    """The part of `docker image inspect` the hash reads, with labels that change on every commit."""
    labels = {"org.opencontainers.image.revision": "0123abc", "org.opencontainers.image.created": "2026-01-01"}
    return {
        "Id": "sha256:" + "f" * 64,
        "RootFS": {"Layers": list(layers)},
        "Config": {**CONFIG, **config, "Labels": labels},
    }


def test_fixed_inputs_give_a_fixed_hash() -> None:
    """Pinned: a change of the hashed document (and so of every cache key) must be deliberate."""
    value = content_hash(image_content(inspect()), SUITE)
    assert value == "9008fd49a24867593263b76a7ab19aa03f2b8215ae80b645566a90c13a4c0dae"


def test_labels_and_the_image_id_do_not_count() -> None:
    other = inspect()
    other["Config"]["Labels"] = {"org.opencontainers.image.revision": "fedcba9"}
    other["Id"] = "sha256:" + "e" * 64
    assert content_hash(image_content(other), SUITE) == content_hash(image_content(inspect()), SUITE)


@pytest.mark.parametrize(
    "changed",
    [
        inspect(layers=(LAYERS[0], f"sha256:{'d' * 64}")),  # a layer's bytes
        inspect(layers=(LAYERS[1], LAYERS[0])),  # the layers' order
        inspect(layers=LAYERS[:1]),  # a layer fewer
        inspect(Env=["PATH=/usr/bin", "NCCL_NVLS_ENABLE=1"]),  # how the container runs
        inspect(Entrypoint=None),
        inspect(User="0"),
    ],
)
def test_what_runs_changes_the_hash(changed: Mapping[str, Any]) -> None:
    assert content_hash(image_content(changed), SUITE) != content_hash(image_content(inspect()), SUITE)


def test_the_suite_changes_the_hash() -> None:
    image = image_content(inspect())
    assert content_hash(image, SUITE) != content_hash(image, "d" * 64)


def test_an_image_without_layers_is_refused() -> None:
    with pytest.raises(UserError, match="lists no layers"):
        content_hash(ImageContent((), {}), SUITE)


def test_hash_image_hashes_the_suite_folder(tmp_path: Path) -> None:
    suite = tmp_path / "conformance"
    suite.mkdir()
    (suite / "test_a.py").write_text("def test_a(): pass\n", encoding="utf-8")
    first = hash_image("img@sha256:" + "0" * 64, suite, inspect=lambda ref: inspect())
    (suite / "__pycache__").mkdir()
    (suite / "__pycache__" / "test_a.cpython-311.pyc").write_bytes(b"bytecode")
    assert hash_image("img", suite, inspect=lambda ref: inspect())["content_hash"] == first["content_hash"]
    (suite / "test_a.py").write_text("def test_a(): assert True\n", encoding="utf-8")
    second = hash_image("img", suite, inspect=lambda ref: inspect())
    assert second["content_hash"] != first["content_hash"]
    assert first["layers"] == 2


def test_the_cli_without_an_engine_says_so() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "content-hash", "pytorch-cuda:v2.9"],
        capture_output=True,
        text=True,
        env={**os.environ, "DOCKER_HOST": "unix:///nonexistent.sock"},
        timeout=60,
    )
    assert result.returncode == 2
    assert "no Docker engine is running" in result.stderr
