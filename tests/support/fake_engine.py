"""A fake at the engine boundary: records what the pipeline asks and answers from a script."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytorch_cuda.engine.protocol import (
    BuildResult,
    EngineBuild,
    ProgressEvent,
    ProgressSink,
    PushResult,
    RunRequest,
    RunResult,
)
from pytorch_cuda.steps.in_image_checks import RESULTS_PATH
from pytorch_cuda.steps.sbom import SBOM_PATH
from pytorch_cuda_contract.results_file import SUITE


def minimal_sbom() -> bytes:
    """The smallest SBOM the build accepts: CycloneDX JSON with a Python and a Debian component."""
    components = [
        {"type": "library", "name": "torch", "version": "2.9.1+cu128", "purl": "pkg:pypi/torch@2.9.1%2Bcu128"},
        {"type": "library", "name": "libc6", "version": "2.41-12", "purl": "pkg:deb/debian/libc6@2.41-12?arch=amd64"},
    ]
    return json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.6", "components": components}).encode()


def registry_digest_of(image_id: str) -> str:
    """The digest the fake registry gives an image: a stable function of its ID."""
    return "sha256:" + hashlib.sha256(image_id.encode()).hexdigest()


def conformance_results(outcomes: Mapping[str, str]) -> bytes:
    """A minimal schema-2 results file as the suite writes it (read back through pytorch_cuda_contract.results_file)."""
    tests = {nodeid: {"outcome": outcome, "message": f"{nodeid} {outcome}"} for nodeid, outcome in outcomes.items()}
    return json.dumps({"schema": 2, "suite": SUITE, "tests": tests}).encode()


@dataclass
class FakeEngine:
    images: dict[str, str] = field(default_factory=dict)  # ref -> image id
    pull_error: str | None = "pull access denied (Docker Hub unreachable)"
    build_error: BaseException | None = None
    untag_error: Exception | None = None  # e.g. the engine went away with the build
    run_exit_code: int = 0
    run_results: bytes | None = field(default_factory=lambda: conformance_results({"test_pins": "passed"}))
    fail_tag_on: str | None = None
    free_bytes: int | None = 100 * 1024**3
    calls: list[str] = field(default_factory=list)
    last_build: EngineBuild | None = None
    imported: list[str] = field(default_factory=list)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)  # ref -> its config's labels
    build_cache: dict[str, int] = field(default_factory=dict)  # build cache record ID -> its size
    sbom: bytes | None = field(default_factory=minimal_sbom)
    # The fake registry: remote ref -> digest; and per ref, the errors its next pushes raise, in order.
    registry: dict[str, str] = field(default_factory=dict)
    manifests: dict[str, str] = field(default_factory=dict)  # digest -> image id
    push_errors: dict[str, list[Exception]] = field(default_factory=dict)
    lookup_errors: list[Exception] = field(default_factory=list)
    cache_gap: str | None = "the fake client cannot export cache"
    layers: int = 3
    run_volumes: dict[str, str] = field(default_factory=dict)  # the last run's named volumes -> container paths
    run_environment: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        return "fake engine"

    def image_id(self, ref: str) -> str | None:
        return self.images.get(ref)

    def image_size(self, ref: str) -> int:
        return 7_500_000_000

    def image_labels(self, ref: str) -> dict[str, str]:
        return dict(self.labels.get(ref, {}))

    def pull(self, ref: str) -> str | None:
        self.calls.append(f"pull {ref}")
        digest = ref.partition("@")[2]
        if digest in self.manifests:  # by digest: the image the fake registry holds under it
            self.images[ref] = self.manifests[digest]
            return None
        if self.pull_error is None:
            self.images[ref] = "sha256:pulled"
        return self.pull_error

    def import_rootfs(
        self, tarball: Path, ref: str, changes: Sequence[str], source_date_epoch: int | None = None
    ) -> str:
        self.calls.append(f"import {ref}")
        self.imported.append(tarball.read_text())
        self.images[ref] = "sha256:imported"
        return "sha256:imported"

    def build(self, request: EngineBuild, on_progress: ProgressSink) -> BuildResult:
        self.calls.append(f"build {request.tag}")
        self.last_build = request
        on_progress(ProgressEvent("step", "[1/1] RUN true"))
        if self.build_error is not None:
            raise self.build_error
        self.images[request.tag] = "sha256:new"
        self.build_cache[f"record-{len(self.build_cache)}"] = 1000  # each build's own cache record
        return BuildResult("sha256:new", 1.0, 0, 1)

    def run(self, request: RunRequest) -> RunResult:
        self.calls.append(f"run {request.ref} {' '.join(request.command)} shm={request.shm_size}")
        self.run_volumes, self.run_environment = dict(request.volumes), dict(request.environment)
        files = {RESULTS_PATH: self.run_results} if self.run_results is not None else {}
        return RunResult(self.run_exit_code, "output", files)

    def tag(self, image_id: str, ref: str) -> None:
        if ref == self.fail_tag_on:
            raise RuntimeError(f"cannot tag {ref}")
        self.calls.append(f"tag {ref}")
        self.images[ref] = image_id

    def untag(self, ref: str) -> None:
        self.calls.append(f"untag {ref}")
        if self.untag_error is not None:
            raise self.untag_error
        self.images.pop(ref, None)

    def free_disk_bytes(self) -> int | None:
        return self.free_bytes

    def layer_digests(self, image_id: str) -> list[str]:
        return [f"sha256:layer-{n}" for n in range(self.layers - 1)] + [f"sha256:top{image_id.removeprefix('sha256:')}"]

    def build_cache_ids(self) -> frozenset[str]:
        return frozenset(self.build_cache)

    def drop_build_cache(self, since: frozenset[str], dockerfile: Path) -> tuple[int, int]:
        """Drops what was added since `since` (the fake's builds add nothing unless a test puts records there)."""
        made = [key for key in self.build_cache if key not in since]
        self.calls.append(f"drop build cache {len(made)}")
        for key in made:
            del self.build_cache[key]
        return len(made), len(made) * 1000

    def image_differences(self, first: str, second: str) -> list[str]:
        self.calls.append(f"diff {first} {second}")
        return [] if first == second else ["layer 1: RUN true", "  etc/hello: mtime 1 != 2"]

    def seed_registry(self, ref: str, image_id: str) -> str:
        """Put an image in the fake registry under ref, as an earlier push would have; returns its digest."""
        digest = registry_digest_of(image_id)
        self.registry[ref] = digest
        self.manifests[digest] = image_id
        return digest

    def read_file(self, ref: str, path: str) -> bytes | None:
        self.calls.append(f"read {ref} {path}")
        return self.sbom if path == SBOM_PATH and ref in self.images else None

    def push(self, ref: str, on_progress: Callable[[str], None]) -> PushResult:
        self.calls.append(f"push {ref}")
        pending = self.push_errors.get(ref)
        if pending:
            raise pending.pop(0)
        digest = registry_digest_of(self.images[ref])
        status = "Layer already exists" if digest in self.manifests else "Pushed"
        self.registry[ref] = digest
        self.manifests[digest] = self.images[ref]
        return PushResult(ref, digest, {f"layer{i}": status for i in range(self.layers)})

    def registry_digest(self, ref: str) -> str | None:
        self.calls.append(f"lookup {ref}")
        if self.lookup_errors:
            raise self.lookup_errors.pop(0)
        return self.registry.get(ref)

    def registry_cache_unsupported(self) -> str | None:
        return self.cache_gap
