"""A build that fails half-way on the real engine: a killed build client, a cut daemon connection, a download
that does not match the lock.

Each exits 2 with one paragraph (cause and fix), leaves its candidate tag nowhere (the one its progress named:
other builds' candidates come and go on the shared engine meanwhile) and moves no release tag; a build
severed from the daemon resumes from the build cache when run again, and the wrong download fails in the one
layer that installs the package, with the heavy layers taken from the cache.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from tests.support.background_build import FIRST_RUN_STEP, WatchedBuild, error_paragraph, rebuilt_run_steps
from tests.support.checkout import scratch_checkout
from tests.support.image_tags import built_candidates, left_behind, tag_ids
from tests.support.integration import ROOT, BuiltImage, record_timing
from tests.support.processes import kill_build_client
from tests.support.socket_proxy import SocketProxy, engine_socket

pytestmark = [pytest.mark.integration, pytest.mark.engine_builds]

BUILD_FLAGS = ["--target", "cu12", "--progress", "plain"]
BUILD = [sys.executable, str(ROOT / "build.py"), *BUILD_FLAGS]
LOCK = Path("images/cu128-runtime/requirements.lock")
OWN_CANDIDATE = "pytorch-cuda:candidate-cu128-runtime"  # and -<build id>: --target cu12 builds the runtime alone
# A small pure-Python package of the last layer, and the sha256 of its one wheel on PyPI
# (jinja2-3.1.6-py3-none-any.whl). Only the wheel's hash goes wrong: the sdist's still matches, and
# uv, unless it installs with --no-build, quietly builds that sdist instead and the build passes.
PACKAGE = "jinja2"
PACKAGE_WHEEL_SHA256 = "85ece4451f492d0c13c5dd7c13a64681a86afae63a5f347908daf103ce6d2f67"


def _own_candidates(progress: str) -> list[str]:
    """The candidate tags the build.py runs of --target cu12 built into, as their progress named them."""
    candidates = built_candidates(progress)
    assert {c.rpartition("-")[0] for c in candidates} == {OWN_CANDIDATE}, candidates
    return candidates


def _sever_during_build(
    sever: Callable[[WatchedBuild], str], env: dict[str, str]
) -> tuple[dict[str, str], str, list[str]]:
    """Start a --no-cache build, and once it is inside its first RUN step, sever it from the daemon.

    Asserts that build.py exits 2 without a traceback; returns its --json answer, its error paragraph and the
    candidate tag it built into."""
    with WatchedBuild([*BUILD, "--no-cache", "--json"], env=env) as build:
        build.wait_for(FIRST_RUN_STEP, 600)  # apt-get installing the system packages (--no-cache runs it again)
        time.sleep(3)  # inside it, downloading and unpacking (the step takes about 14 s)
        severed = sever(build)
        status = build.wait(120)
    progress = build.progress
    assert status == 2, progress[-3000:]
    assert "Traceback" not in progress, progress[-3000:]
    paragraph = error_paragraph(progress)
    print(f"\n{severed}; build.py said:\n{paragraph}", file=sys.stderr)
    return json.loads(build.stdout), paragraph, _own_candidates(progress)


def _assert_nothing_moved_and_a_rerun_resumes(
    built: BuiltImage, client: docker.DockerClient, before: dict[str, str | None], candidates: list[str]
) -> None:
    assert left_behind(client, candidates) == []
    assert tag_ids(client, list(built.result["tags"])) == before
    again = subprocess.run([*BUILD, "--json"], capture_output=True, text=True, timeout=1800)
    assert again.returncode == 0, again.stderr[-2000:]
    answer = json.loads(again.stdout)
    assert answer["image_id"] == built.result["image_id"]  # resumed: the same image
    # and on the same base, as it is: a base bootstrapped again (its recorded recipe misread) is no resume
    assert answer["base"]["how"] != "bootstrapped", answer["base"]
    assert rebuilt_run_steps(again.stderr) == [], again.stderr[-3000:]  # every RUN step came from the cache
    assert left_behind(client, [*candidates, answer["candidate"]]) == []


def test_killed_build_client_exits_2_moves_no_tag_and_a_rerun_resumes(
    built: BuiltImage, client: docker.DockerClient
) -> None:
    before = tag_ids(client, list(built.result["tags"]))
    started = time.monotonic()
    killed: list[str] = []

    def kill(build: WatchedBuild) -> str:
        killed.extend(kill_build_client(build.process.pid))
        return f"killed the build client ({' '.join(killed[:2])}) with SIGKILL"

    error, paragraph, candidates = _sever_during_build(kill, dict(os.environ))
    assert error["error"] == "EngineError"
    assert f"the build client (`{' '.join(killed[:2])}" in error["cause"], error
    assert "killed by signal 9 (SIGKILL)" in error["cause"]
    assert "no image was tagged" in error["cause"]
    assert error["fix"].startswith("build again"), error
    assert "killed by signal 9 (SIGKILL)" in paragraph
    assert " Fix: build again" in paragraph
    _assert_nothing_moved_and_a_rerun_resumes(built, client, before, candidates)
    record_timing("killed_build_client_seconds", round(time.monotonic() - started, 1))


def test_cut_daemon_connection_exits_2_moves_no_tag_and_a_rerun_resumes(
    built: BuiltImage, client: docker.DockerClient
) -> None:
    """The client lives on, but its connections to the daemon drop (a daemon restart, a proxy or SSH link that
    dies): a proxy in front of the engine's socket cuts the docker CLI's connections, and leaves build.py's own."""
    upstream = engine_socket()
    if upstream is None:
        pytest.skip("the engine is not on a unix socket here (DOCKER_HOST is tcp or ssh)")
    before = tag_ids(client, list(built.result["tags"]))
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="engine-proxy-") as where,
        SocketProxy(Path(where) / "docker.sock", upstream) as proxy,
    ):

        def cut(build: WatchedBuild) -> str:
            lines = proxy.cut(lambda head: "User-Agent: Docker-Client/" in head)
            assert lines, "the build client opened no connection through the proxy"
            return f"cut the build client's {len(lines)} connections to the daemon ({', '.join(lines)})"

        error, paragraph, candidates = _sever_during_build(cut, {**os.environ, "DOCKER_HOST": proxy.docker_host})
    assert error["error"] == "EngineError"
    assert "lost its connection to the Docker daemon" in error["cause"], error
    assert "no image was tagged" in error["cause"]
    assert "docker info" in error["fix"], error
    assert "lost its connection to the Docker daemon" in paragraph
    assert " Fix: " in paragraph
    _assert_nothing_moved_and_a_rerun_resumes(built, client, before, candidates)
    record_timing("cut_daemon_connection_seconds", round(time.monotonic() - started, 1))


def _wrong_wheel_hash(lock_text: str, package: str, wheel_sha256: str) -> str:
    """The lock with the hash of `package`'s wheel replaced by a well-formed sha256 that no file has."""
    block = re.compile(rf"^{re.escape(package)}==\S+ \\\n(?:\s+--hash=sha256:[0-9a-f]{{64}}(?: \\)?\n)+", re.M)
    match = block.search(lock_text)
    assert match is not None, f"{package} is not in the lock"
    assert wheel_sha256 in match.group(0), (
        f"the lock's {package} is no longer the release whose wheel hash this test knows; update PACKAGE_WHEEL_SHA256"
    )
    assert match.group(0).count("--hash=") >= 2, f"{package} has no sdist hash to fall back on: {match.group(0)}"
    wrong = match.group(0).replace(wheel_sha256, "0" * 56 + wheel_sha256[-8:])
    return lock_text[: match.start()] + wrong + lock_text[match.end() :]


def _network_failure(answer: str) -> bool:
    """build.py's --json answer names a download that failed on the network (the index or its CDN did not answer),
    not a hash mismatch: the wrong-hash build needs the index once, to fetch the package again."""
    try:
        cause = str(json.loads(answer).get("cause", ""))
    except (json.JSONDecodeError, AttributeError):
        return False
    return "does not match its hash" not in cause and any(
        word in cause for word in ("a download inside the build failed", "Failed to download", "error sending request")
    )


def test_download_not_matching_the_lock_exits_2_and_moves_no_tag(
    built: BuiltImage, client: docker.DockerClient, tmp_path: Path
) -> None:
    refs = list(built.result["tags"])
    before = tag_ids(client, refs)
    started = time.monotonic()
    with scratch_checkout(ROOT, tmp_path / "checkout") as scratch:
        lock = scratch / LOCK
        lock.write_text(
            _wrong_wheel_hash(lock.read_text(encoding="utf-8"), PACKAGE, PACKAGE_WHEEL_SHA256), encoding="utf-8"
        )
        scratch_build = [sys.executable, str(scratch / "build.py")]
        rendered = subprocess.run([*scratch_build, "render", "--json"], capture_output=True, text=True, check=True)
        assert "images/cu128-runtime/layer-3-python.lock" in json.loads(rendered.stdout)["changed"]
        # The runtime lock's own check compares its requirements and index, not each file's bytes: it lets
        # the wrong hash through, and the build's --require-hashes has to catch it. Only the jupyter
        # child's lock, which records the digest of its parent's lock, calls itself stale; the runtime
        # build does not need it.
        checked = subprocess.run([*scratch_build, "render", "--check"], capture_output=True, text=True)
        stale = [line for line in checked.stdout.splitlines() if line.startswith("stale:")]
        assert len(stale) == 1, checked.stdout + checked.stderr
        assert stale[0].startswith("stale: images/cu128-jupyter/requirements-flavour.lock: stale:"), stale
        wrong_hash_build = [*scratch_build, *BUILD_FLAGS, "--json"]
        failed = subprocess.run(wrong_hash_build, capture_output=True, text=True, timeout=1800)
        progress = failed.stderr
        if _network_failure(failed.stdout):  # the index did not answer: that is not what this test is about
            print(f"\nthe wrong-hash build failed on the network first, once more:\n{failed.stdout}", file=sys.stderr)
            failed = subprocess.run(wrong_hash_build, capture_output=True, text=True, timeout=1800)
            progress += failed.stderr
    said = f"build.py's progress ended with:\n{failed.stderr[-3000:]}"
    assert failed.returncode == 2, said
    assert "Traceback" not in failed.stderr, said
    error = json.loads(failed.stdout)
    assert error["error"] == "EngineError", (error, said)
    assert f"the download of {PACKAGE}==" in error["cause"], (error, said)
    assert "does not match its hash in images/cu128-runtime/requirements.lock" in error["cause"], (error, said)
    assert "`python build.py lock --target cu128`" in error["fix"], error
    paragraph = error_paragraph(failed.stderr)
    assert "does not match its hash" in paragraph
    assert " Fix: " in paragraph
    print(f"\nwrong hash of {PACKAGE} in the lock; build.py said:\n{paragraph}", file=sys.stderr)
    # Only the small packages' layer ran (and failed); the CUDA and torch layers came from the cache.
    rebuilt = rebuilt_run_steps(failed.stderr)
    assert len(rebuilt) == 1, (rebuilt, said)
    assert "layer-3-python.lock" in rebuilt[0], (rebuilt, said)
    assert left_behind(client, _own_candidates(progress)) == [], said  # each run's, the one retried too
    assert tag_ids(client, refs) == before, said
    record_timing("download_not_matching_the_lock_seconds", round(time.monotonic() - started, 1))
