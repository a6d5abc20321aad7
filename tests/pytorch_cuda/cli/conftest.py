"""The unit tier's engine: up, as on a user's machine. `build --dry-run` checks the engine as the real run does
(down is exit 2); these tests run without one, so the check's boundary (connect, find the build client) answers
as a running engine would. A test of the engine-down path fakes it down (or runs build.py with a dead
DOCKER_HOST); tests that build use tests/support/fake_engine.py on top of this."""

from __future__ import annotations

import pytest

from pytorch_cuda.cli import building
from pytorch_cuda.engine.build_client import BuildClient


class RunningEngine:
    """What connect() gives when the engine answers its ping; a dry run asks it nothing more than its info."""

    def info(self) -> dict[str, object]:
        return {"ServerVersion": "20.10.24", "Driver": "overlay2"}


@pytest.fixture(autouse=True)
def engine_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(building, "connect", RunningEngine)
    monkeypatch.setattr(building, "find_build_client", lambda: BuildClient("buildx", ("docker", "buildx", "build")))
