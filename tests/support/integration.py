"""Integration fixtures: a real Docker engine and the cu12 image built through build.py, chromium, PostgreSQL and
loopback servers. A test that asks for one must be marked integration (tests/support/tiers.py).

A pytest plugin, registered for the whole tree by tests/conftest.py. Its imports of the engine's client and of the
helpers are inside the fixtures: the tree's conftest also loads inside the image and on bare GPU hosts
(scripts/suite-tests-in-image.sh, gpu/*.sh), where only the standard library, torch and pytest are installed."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import docker

    from tests.support.containers import ImageRunner
    from tests.support.loopback_debian import LoopbackArchive
    from tests.support.loopback_index import LoopbackIndex
    from tests.support.postgres_server import PostgresServer

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "pytorch-cuda:v2.9"
TIMINGS = ROOT / "build-output" / "integration-timings.json"

# scripts/test-lanes.sh runs this tier in lanes side by side: `-m "integration and engine_builds"`, and
# `-m "integration and not engine_builds"` split in two, tests/pytorch_cuda/release (registry only, no engine) and
# the rest (and the suite's own tests inside the image in a fourth, once the first of those ends). The tests that run
# build.py on this checkout's cu12 variants hold its build lock
# (build-output/build-*.lock) and leave pytorch-cuda:candidate-* tags while they run, and several assert that their own
# build left its candidate tag behind nowhere (tests/support/image_tags.py: the tag its progress named; other builds on
# the engine, another checkout's included, come and go meanwhile): they are the engine_builds lane, one after another,
# marked where they are (their modules' pytestmark, or the test). The other lanes only run containers of the built
# image, derive images of their own names, or serve a loopback index or registry of their own; the engine_builds lane's
# builds point the release tags at the same image again (same content, same ID).
ENGINE_BUILDS = "engine_builds"
BUILD_LOCK = "integration-builds"  # held by every build.py this tier runs on this checkout, and by engine_builds tests


_held: dict[str, int] = {}  # lock name -> how deeply this process holds it


@contextmanager
def host_lock(name: str) -> Iterator[None]:
    """An advisory lock on build-output/NAME.lock, across the two lanes (released however the holder ends).

    Re-entrant within a process: a test that holds it may call run_build_py, which takes it too."""
    if _held.get(name):
        _held[name] += 1
        try:
            yield
        finally:
            _held[name] -= 1
        return
    path = ROOT / "build-output" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        _held[name] = 1
        try:
            yield
        finally:
            _held[name] = 0


@pytest.fixture(autouse=True)
def _one_build_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    """An engine_builds test holds the build lock while it runs: the other lane runs build.py only once, in the
    `built` fixture, and must not do so in the middle of a test that holds build.py's own lock."""
    if request.node.get_closest_marker(ENGINE_BUILDS) is None:
        yield
        return
    with host_lock(BUILD_LOCK):
        yield


@dataclass(frozen=True)
class BuiltImage:
    ref: str
    result: dict[str, Any]
    seconds: float


def run_build_py(*args: str) -> tuple[dict[str, Any], float]:
    """Run build.py for real, its progress going to our stderr, and return its JSON and wall time."""
    with host_lock(BUILD_LOCK):
        started = time.monotonic()
        process = subprocess.run(
            [sys.executable, str(ROOT / "build.py"), *args, "--json"],
            stdout=subprocess.PIPE,
            stderr=None,  # progress shows in the test log
            text=True,
            timeout=3600,
        )
        seconds = time.monotonic() - started
    data = json.loads(process.stdout) if process.stdout.strip() else {}
    assert process.returncode == 0, f"build.py {' '.join(args)} failed ({process.returncode}): {data}"
    return data, seconds


def record_timing(name: str, value: object, *, first: bool = False) -> None:
    """Add a timing to the run's file; with first=True, only where no lane recorded it yet."""
    with host_lock("integration-timings"):  # both lanes add to the one file
        data = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
        if first and name in data:
            return
        data[name] = value
        written = TIMINGS.with_name(f"{TIMINGS.name}.{os.getpid()}")
        written.write_text(json.dumps(data, indent=2))
        written.replace(TIMINGS)


@pytest.fixture(scope="session")
def client() -> docker.DockerClient:
    import docker

    try:
        engine = docker.from_env(timeout=900)
        engine.ping()
    except docker.errors.DockerException as exc:
        pytest.fail(f"integration tests need a running Docker engine (run sudo scripts/setup-docker.sh): {exc}")
    return engine


@pytest.fixture(scope="session")
def built(client: docker.DockerClient) -> BuiltImage:
    """Build the cu12 runtime image through the README's command (cold in CI, warm locally).

    Each lane asks; the build lock (run_build_py) makes the second wait for the first, and then reuse its image."""
    result, seconds = run_build_py("--target", "cu12")
    record_timing("build_cu12_seconds", round(seconds, 1), first=True)  # the lane that built it, not the reuse
    record_timing("image_size_bytes", result["size_bytes"])
    print(f"\nbuild.py --target cu12: {seconds:.1f} s, {result['size_bytes'] / 1e9:.2f} GB", file=sys.stderr)
    return BuiltImage(IMAGE, result, seconds)


@pytest.fixture(scope="session")
def runner(client: docker.DockerClient) -> Iterator[ImageRunner]:
    from tests.support.containers import ImageRunner

    with ImageRunner(client) as images:
        yield images


@pytest.fixture(scope="session")
def ca_bundle() -> Path | None:
    """The CA bundle the build passes as a secret, found the way build.py finds it."""
    from pytorch_cuda.network.ca_bundle import find_ca_bundle

    found = find_ca_bundle(None)
    return found.path if found else None


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium (scripts/setup-browser.sh installs it): the report and site pages' real browser."""
    from pytorch_cuda.precision_report.browser import find_chromium

    found = find_chromium()
    if found is None:
        pytest.fail("no chromium on this machine: run scripts/setup-browser.sh (scripts/setup-tests.sh calls it)")
    return found


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL cluster for the session (tests/support/postgres_server.py)."""
    from tests.support.postgres_server import running_server

    with running_server() as started:
        yield started


@pytest.fixture
def loopback_index(tmp_path: Path) -> Iterator[LoopbackIndex]:
    """A package index on 127.0.0.1 with the matrix's first releases (tests/support/bump_checkout.py)."""
    from tests.support.bump_checkout import FIRST
    from tests.support.loopback_index import LoopbackIndex

    served = LoopbackIndex(tmp_path / "index")
    served.publish(*FIRST)
    served.start()
    yield served
    served.stop()


@pytest.fixture
def debian_archive(tmp_path: Path) -> Iterator[LoopbackArchive]:
    """A Debian archive on 127.0.0.1 with the committed Debian record's versions and nothing newer."""
    from tests.support.bump_checkout import current_archive

    served = current_archive(tmp_path / "archive")
    served.start()
    yield served
    served.stop()
