"""Ctrl-C and a second concurrent build, on the real engine: the build's own candidate tag gone (other builds'
come and go on the shared engine meanwhile), no moved alias, a rerun resumes.

The test sends build.py the SIGINT a terminal's Ctrl-C would, once its progress shows the step to interrupt
(a fixed timer raced the build on a slow machine; a background job of a non-interactive shell would ignore
SIGINT, so the signal goes to build.py directly).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import docker
import pytest

from tests.support.background_build import FIRST_RUN_STEP, WatchedBuild, rebuilt_run_steps
from tests.support.image_tags import built_candidates, left_behind, tag_ids
from tests.support.integration import ROOT, BuiltImage

pytestmark = [pytest.mark.integration, pytest.mark.engine_builds]

BUILD = [sys.executable, str(ROOT / "build.py"), "--target", "cu12", "--progress", "plain"]


def _interrupt_after(flags: list[str], marker: str, settle_s: float) -> tuple[int, str, float]:
    """Start build.py, wait for `marker` in its progress, then send the SIGINT a Ctrl-C would.

    Returns the exit status, the whole stderr and the seconds from the signal to the exit."""
    with WatchedBuild([*BUILD, *flags]) as build:
        build.wait_for(marker, 600)
        time.sleep(settle_s)
        assert build.process.poll() is None, f"build.py ended before the signal:\n{build.progress[-2000:]}"
        signalled = time.monotonic()
        build.process.send_signal(signal.SIGINT)
        status = build.wait(120)
        stopped_s = time.monotonic() - signalled
    return status, build.progress, stopped_s


@pytest.mark.parametrize(
    ("flags", "marker", "settle_s"),
    [
        # in the middle of a real build step: apt-get installing the system packages (--no-cache runs it again)
        (["--no-cache"], FIRST_RUN_STEP, 3.0),
        # the build is cached: in the middle of the in-image checks
        (["--recheck"], "running `conformance -m cpu`", 3.0),
    ],
    ids=["during-build-step", "during-checks"],
)
def test_ctrl_c_moves_no_tag_and_a_rerun_resumes(
    built: BuiltImage, client: docker.DockerClient, flags: list[str], marker: str, settle_s: float
) -> None:
    refs = list(built.result["tags"])
    before = tag_ids(client, refs)
    status, progress, stopped_s = _interrupt_after(flags, marker, settle_s)
    assert status == 130, progress[-2000:]
    assert "interrupted; no tag was moved" in progress
    assert stopped_s < 60, f"it took {stopped_s:.0f} s to stop after Ctrl-C"  # it stopped, rather than finishing
    candidates = built_candidates(progress)
    assert [c.rpartition("-")[0] for c in candidates] == ["pytorch-cuda:candidate-cu128-runtime"], candidates
    assert left_behind(client, candidates) == []
    assert tag_ids(client, refs) == before
    again = subprocess.run([*BUILD, "--json"], capture_output=True, text=True, timeout=1800)
    assert again.returncode == 0, again.stderr[-2000:]
    result = json.loads(again.stdout)
    assert result["image_id"] == built.result["image_id"]  # resumed: the same image
    assert rebuilt_run_steps(again.stderr) == [], again.stderr[-3000:]  # every RUN step came from the cache
    assert left_behind(client, [result["candidate"]]) == []


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
    ids = set(tag_ids(client, list(built.result["tags"])).values())
    assert len(ids) == 1  # every tag points at one image
