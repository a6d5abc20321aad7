"""The built image installs exactly its lock, with bytecode, without uv, and records its base."""

from __future__ import annotations

import json

import docker
import pytest

from tests.support.containers import ImageRunner
from tests.support.integration import ROOT, BuiltImage

pytestmark = pytest.mark.integration

SITE = "/opt/pytorch/lib/python3.13/site-packages"


def test_the_image_holds_its_lock_and_installed_exactly_it(built: BuiltImage, runner: ImageRunner) -> None:
    lock = runner.run(built.ref, ["cat", "/etc/pytorch-cuda/requirements.lock"])
    assert lock.output == (ROOT / "images/cu128-runtime/requirements.lock").read_text()
    freeze = runner.run(
        built.ref, ["python", "-m", "pip", "--disable-pip-version-check", "list", "--format=json", "--exclude", "pip"]
    )
    installed = {row["name"].lower().replace("_", "-"): row["version"] for row in json.loads(freeze.output)}
    pinned = dict(
        line.split(" ", 1)[0].split("==") for line in lock.output.splitlines() if "==" in line and " \\" in line
    )
    assert installed == pinned


def test_bytecode_is_compiled_and_uv_is_not_in_the_image(built: BuiltImage, runner: ImageRunner) -> None:
    found = runner.run(
        built.ref,
        ["sh", "-c", f"ls {SITE}/torch/__pycache__/__init__.cpython-313.pyc; command -v uv || echo no-uv"],
    )
    assert "__init__.cpython-313.pyc" in found.output
    assert "no-uv" in found.output


def test_no_shared_library_is_there_twice(built: BuiltImage, runner: ImageRunner) -> None:
    listing = runner.run(built.ref, ["sh", "-c", "find / -xdev -type f -name 'lib*.so*' 2>/dev/null; true"])
    names = [path.rsplit("/", 1)[-1] for path in listing.output.split()]
    assert sorted({name for name in names if names.count(name) > 1}) == []


def test_the_base_record_names_the_base(built: BuiltImage, runner: ImageRunner, client: docker.DockerClient) -> None:
    record = json.loads(runner.run(built.ref, ["cat", "/etc/pytorch-cuda/base.json"]).output)
    assert record["id"] == client.images.get("pytorch-cuda-base/debian:trixie").id
    assert record["dpkg"]["tini"]
