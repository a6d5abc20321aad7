"""The real engine: BuildKit through the docker CLI for builds, the Docker SDK for everything else."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import tarfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

import docker
import docker.errors
import requests.exceptions

from pytorch_cuda.engine.build_cache import cache_records, drop_build_cache
from pytorch_cuda.engine.build_client import BuildClient
from pytorch_cuda.engine.build_failure import explain_build_failure
from pytorch_cuda.engine.buildkit_log import BuildKitParser, RunningSteps, minutes
from pytorch_cuda.engine.engine_push import push_image, registry_digest
from pytorch_cuda.engine.image_diff import diff_images
from pytorch_cuda.engine.image_times import stamp_and_retag
from pytorch_cuda.engine.protocol import (
    BuildResult,
    EngineBuild,
    ProgressEvent,
    ProgressSink,
    PushResult,
    RunRequest,
    RunResult,
)
from pytorch_cuda.errors import EngineError
from pytorch_cuda.references import parse_reference

HEARTBEAT_SECONDS = 30.0
FAILURE_LOG_LINES = 400  # how much of the log a failed build is explained from


class DockerEngine:
    def __init__(self, client: docker.DockerClient, build_client: BuildClient) -> None:
        self._client = client
        self._build_client = build_client
        self._info: dict[str, object] = client.info()

    def describe(self) -> str:
        return (
            f"Docker Engine {self._info.get('ServerVersion')} ({self._info.get('Driver')}), "
            f"builds with {' '.join(self._build_client.argv[1:])}"
            f"{' (DOCKER_BUILDKIT=1)' if self._build_client.env else ''}"
        )

    def image_id(self, ref: str) -> str | None:
        try:
            image = self._client.images.get(ref)
        except docker.errors.ImageNotFound:
            return None
        return str(image.id)

    def image_size(self, ref: str) -> int:
        return int(self._client.images.get(ref).attrs["Size"])

    def image_labels(self, ref: str) -> dict[str, str]:
        return dict(self._client.images.get(ref).labels or {})

    def pull(self, ref: str) -> str | None:
        repository, tag = parse_reference(ref).pull_args  # a digest goes where the tag goes
        try:
            self._client.images.pull(repository, tag=tag)
        except docker.errors.APIError as exc:
            return str(exc.explanation or exc).splitlines()[0][:300]
        except requests.exceptions.RequestException as exc:
            return str(exc).splitlines()[0][:300]
        return None

    def import_rootfs(
        self, tarball: Path, ref: str, changes: Sequence[str], source_date_epoch: int | None = None
    ) -> str:
        repository, tag = parse_reference(ref).pull_args
        # From a path, the SDK sends the file with a Content-Length; its stream variant
        # claims chunked encoding without chunking, which the engine rejects.
        response = self._client.api.import_image_from_file(
            str(tarball), repository=repository, tag=tag, changes=list(changes)
        )
        image_id = self.image_id(ref)
        if image_id is None:
            raise EngineError(
                cause=f"`docker import` of {tarball} did not produce {ref}: {str(response)[:300]}",
                fix="check the engine's log (dockerd) and the free disk space, then build again",
            )
        if source_date_epoch is not None:
            image_id = stamp_and_retag(self._client, image_id, source_date_epoch, ref)
        return image_id

    def build(self, request: EngineBuild, on_progress: ProgressSink) -> BuildResult:
        argv = self._build_client.command(request)
        env = {**os.environ, **self._build_client.env}
        parser = BuildKitParser()
        started = time.monotonic()
        failed_step = ""
        cached = total = 0
        log_tail: deque[str] = deque(maxlen=FAILURE_LOG_LINES)
        log_file = request.log_path.open("w", encoding="utf-8") if request.log_path else None
        current = ["starting"]
        finished = threading.Event()

        running = RunningSteps()

        def heartbeat() -> None:
            while not finished.wait(HEARTBEAT_SECONDS):
                now = time.monotonic()
                build = f"build {minutes(now - started)}"
                longest = running.longest(now)
                text = f"{minutes(longest[1])} ({build})" if longest else build
                on_progress(ProgressEvent("tick", longest[0] if longest else "", text))

        ticker = threading.Thread(target=heartbeat, name="build-heartbeat", daemon=True)
        ticker.start()
        try:
            process = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, bufsize=1
            )
            assert process.stdout is not None
            for line in process.stdout:
                log_tail.append(line)
                if log_file:
                    log_file.write(line)
                event = parser.feed(line)
                if event is None:
                    continue
                running.observe(event, time.monotonic())
                if event.kind == "step" and "[internal]" not in event.step:
                    total += 1
                    current[0] = event.step
                elif event.kind == "cached":
                    cached += 1
                elif event.kind == "error":
                    failed_step = event.step
                on_progress(event)
            code = process.wait()
        except KeyboardInterrupt:
            process.terminate()  # the client cancels the BuildKit session: nothing gets tagged
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=30)
            raise
        finally:
            finished.set()
            if log_file:
                log_file.close()
        if code != 0:
            raise explain_build_failure(
                "".join(log_tail),
                request.log_path,
                failed_step,
                exit_code=code,
                client=" ".join(self._build_client.argv),
                running_step=current[0] if total else "",
            )
        image_id = self.image_id(request.tag)
        if image_id is None:
            raise EngineError(
                cause=f"the build reported success but {request.tag} does not exist",
                fix="check that the build client loads images into this engine (buildx: a 'docker' driver or --load)",
            )
        # A workaround: Docker 20.10's BuildKit 0.8 stamps the wall clock on the config; SOURCE_DATE_EPOCH sets it from
        # BuildKit 0.11 on (https://github.com/moby/buildkit/pull/2918).
        if request.created_epoch is not None:
            image_id = stamp_and_retag(self._client, image_id, request.created_epoch, request.tag)
        return BuildResult(image_id, time.monotonic() - started, cached, total)

    def run(self, request: RunRequest) -> RunResult:
        container = self._client.containers.run(
            request.ref,
            list(request.command),
            detach=True,
            shm_size=request.shm_size,
            network_disabled=True,
            volumes={name: {"bind": path, "mode": "rw"} for name, path in request.volumes.items()},
            environment=dict(request.environment),
        )
        timed_out = False
        try:
            try:
                status = container.wait(timeout=request.timeout_s)
                exit_code = int(status.get("StatusCode", -1))
            except requests.exceptions.RequestException:
                timed_out = True
                container.kill()
                exit_code = 124
            output = container.logs(stdout=True, stderr=True).decode("utf-8", errors="replace")
            files = {
                path: data for path in request.collect if (data := read_container_file(container, path)) is not None
            }
        finally:
            container.remove(force=True)
        return RunResult(exit_code, output, files, timed_out)

    def tag(self, image_id: str, ref: str) -> None:
        repository, tag = parse_reference(ref).pull_args
        self._client.images.get(image_id).tag(repository, tag)

    def untag(self, ref: str) -> None:
        try:
            self._client.images.remove(ref, noprune=False)
        except docker.errors.ImageNotFound:
            pass
        except docker.errors.APIError as exc:
            # The image is still used by a container: dropping the tag is all we wanted.
            if exc.status_code != 409:
                raise

    def read_file(self, ref: str, path: str) -> bytes | None:
        container = self._client.containers.create(ref, ["true"], network_disabled=True)
        try:
            return read_container_file(container, path)
        finally:
            container.remove(force=True)

    def push(self, ref: str, on_progress: Callable[[str], None]) -> PushResult:
        return push_image(self._client, ref, on_progress)

    def registry_digest(self, ref: str) -> str | None:
        return registry_digest(self._client, ref)

    def image_differences(self, first: str, second: str) -> list[str]:
        lines = []
        for layer in diff_images(self._client, first, second):
            lines.append(f"layer {layer.index + 1}: {layer.created_by[:160]}")
            lines += [f"  {file}" for file in layer.files]
        return lines

    def layer_digests(self, image_id: str) -> list[str]:
        return [str(layer) for layer in self._client.images.get(image_id).attrs["RootFS"]["Layers"]]

    def build_cache_ids(self) -> frozenset[str]:
        return frozenset(cache_records(self._client))

    def drop_build_cache(self, since: frozenset[str], dockerfile: Path) -> tuple[int, int]:
        dropped = drop_build_cache(self._client, since, dockerfile)
        return dropped.records, dropped.bytes_reclaimed

    def registry_cache_unsupported(self) -> str | None:
        return self._build_client.registry_cache_gap

    def free_disk_bytes(self) -> int | None:
        root = str(self._info.get("DockerRootDir") or "/var/lib/docker")
        try:
            stats = os.statvfs(root)
        except OSError:
            return None
        return stats.f_bavail * stats.f_frsize


def read_container_file(container: docker.models.containers.Container, path: str) -> bytes | None:
    try:
        chunks, _ = container.get_archive(path)
    except docker.errors.NotFound:
        return None
    buffer = io.BytesIO(b"".join(chunks))
    with tarfile.open(fileobj=buffer) as archive:
        member = archive.next()
        if member is None or not member.isfile():
            return None
        extracted = archive.extractfile(member)
        return extracted.read() if extracted else None
