"""Ctrl-C and a second concurrent build, on the real engine: no candidate tag, no moved alias, a rerun resumes.

`timeout -s INT` delivers the SIGINT a terminal's Ctrl-C would (a background job of a non-interactive
shell ignores SIGINT, so the signal is sent to build.py directly).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import docker
import pytest

from tests.integration.conftest import ROOT, BuiltImage, run_build_py

BUILD = [sys.executable, str(ROOT / "build.py"), "--target", "cu12", "--progress", "plain"]


def _tags(client: docker.DockerClient, refs: list[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for ref in refs:
        try:
            found[ref] = client.images.get(ref).id
        except docker.errors.ImageNotFound:
            found[ref] = None
    return found


def _candidates(client: docker.DockerClient) -> list[str]:
    return [t for image in client.images.list("pytorch-cuda") for t in image.tags if ":candidate-" in t]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("flags", "after_s"),
    [
        (["--no-cache"], 25),  # in the middle of a real build step (apt or the first wheel layer)
        (["--recheck"], 25),  # the build is cached: in the middle of the in-image checks
    ],
    ids=["during-build-step", "during-checks"],
)
def test_ctrl_c_moves_no_tag_and_a_rerun_resumes(
    built: BuiltImage, client: docker.DockerClient, flags: list[str], after_s: int
) -> None:
    refs = list(built.result["tags"])
    before = _tags(client, refs)
    started = time.monotonic()
    interrupted = subprocess.run(
        ["timeout", "--preserve-status", "-s", "INT", str(after_s), *BUILD, *flags],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert interrupted.returncode == 130, interrupted.stderr[-2000:]
    assert "interrupted; no tag was moved" in interrupted.stderr
    assert time.monotonic() - started < after_s + 60  # it stopped, rather than finishing the build
    assert _candidates(client) == []
    assert _tags(client, refs) == before
    again, _ = run_build_py("--target", "cu12")
    assert again["image_id"] == built.result["image_id"]  # resumed from the cache: the same image
    assert again["cached_steps"] >= again["total_steps"] - 1


@pytest.mark.integration
def test_a_second_build_of_the_same_target_refuses(built: BuiltImage, client: docker.DockerClient) -> None:
    first = subprocess.Popen([*BUILD, "--recheck"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        lock = ROOT / "build-output" / "build-cu128-runtime.lock"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and f"pid {first.pid}," not in (lock.read_text() if lock.exists() else ""):
            time.sleep(0.5)
        second = subprocess.run([*BUILD, "--json"], capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        assert json.loads(second.stdout)["error"] == "BuildBusyError"
        assert "another build of cu128-runtime is running" in " ".join(second.stderr.split())
    finally:
        _, err = first.communicate(timeout=900)
    assert first.returncode == 0, err[-2000:]
    ids = set(_tags(client, list(built.result["tags"])).values())
    assert len(ids) == 1  # every tag points at one image
