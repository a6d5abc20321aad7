"""A fake at the engine boundary: records what the pipeline asks and answers from a script."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.results_file import SUITE
from pytorch_cuda.engine.protocol import BuildRequest, BuildResult, ProgressEvent, ProgressSink, RunResult
from pytorch_cuda.steps.in_image_checks import RESULTS_PATH


def conformance_results(outcomes: Mapping[str, str]) -> bytes:
    """A minimal schema-2 results file as the suite writes it (read back through conformance.results_file)."""
    tests = {nodeid: {"outcome": outcome, "message": f"{nodeid} {outcome}"} for nodeid, outcome in outcomes.items()}
    return json.dumps({"schema": 2, "suite": SUITE, "tests": tests}).encode()


@dataclass
class FakeEngine:
    images: dict[str, str] = field(default_factory=dict)  # ref -> image id
    pull_error: str | None = "pull access denied (Docker Hub unreachable)"
    build_error: BaseException | None = None
    run_exit_code: int = 0
    run_results: bytes | None = field(default_factory=lambda: conformance_results({"test_pins": "passed"}))
    fail_tag_on: str | None = None
    free_bytes: int | None = 100 * 1024**3
    calls: list[str] = field(default_factory=list)
    last_build: BuildRequest | None = None
    imported: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return "fake engine"

    def image_id(self, ref: str) -> str | None:
        return self.images.get(ref)

    def image_size(self, ref: str) -> int:
        return 7_500_000_000

    def pull(self, ref: str) -> str | None:
        self.calls.append(f"pull {ref}")
        if self.pull_error is None:
            self.images[ref] = "sha256:pulled"
        return self.pull_error

    def import_rootfs(self, tarball: Path, ref: str, changes: Sequence[str]) -> str:
        self.calls.append(f"import {ref}")
        self.imported.append(tarball.read_text())
        self.images[ref] = "sha256:imported"
        return "sha256:imported"

    def build(self, request: BuildRequest, on_progress: ProgressSink) -> BuildResult:
        self.calls.append(f"build {request.tag}")
        self.last_build = request
        on_progress(ProgressEvent("step", "[1/1] RUN true"))
        if self.build_error is not None:
            raise self.build_error
        self.images[request.tag] = "sha256:new"
        return BuildResult("sha256:new", 1.0, 0, 1)

    def run(
        self,
        ref: str,
        command: Sequence[str],
        *,
        shm_size: str,
        timeout_s: float,
        collect: Sequence[str] = (),
    ) -> RunResult:
        self.calls.append(f"run {ref} {' '.join(command)} shm={shm_size}")
        files = {RESULTS_PATH: self.run_results} if self.run_results is not None else {}
        return RunResult(self.run_exit_code, "output", files)

    def tag(self, image_id: str, ref: str) -> None:
        if ref == self.fail_tag_on:
            raise RuntimeError(f"cannot tag {ref}")
        self.calls.append(f"tag {ref}")
        self.images[ref] = image_id

    def untag(self, ref: str) -> None:
        self.calls.append(f"untag {ref}")
        self.images.pop(ref, None)

    def free_disk_bytes(self) -> int | None:
        return self.free_bytes
