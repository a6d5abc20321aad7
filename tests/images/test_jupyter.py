"""The jupyter flavour for real: built FROM the checked runtime, served with a token, a notebook executed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import docker
import pytest
import requests

from tests.support.docker_cli import DOCKER
from tests.support.docker_cli import docker as docker_cli
from tests.support.integration import ROOT, BuiltImage, record_timing, run_build_py

pytestmark = [pytest.mark.integration, pytest.mark.engine_builds]

URL_WITH_TOKEN = re.compile(r"http://127\.0\.0\.1:8888/lab\?token=([0-9a-f]{32,})")
NOTEBOOK = ROOT / "examples" / "amp-fp16-bf16.ipynb"


@dataclass(frozen=True)
class Server:
    container: str
    base: str
    token: str
    logs: str


@pytest.fixture(scope="module")
def jupyter(built: BuiltImage) -> BuiltImage:
    result, seconds = run_build_py("--target", "cu12", "--flavour", "jupyter")
    runtime = result["built_first"][0]
    assert runtime["image_id"] == built.result["image_id"]  # FROM the runtime just built and checked
    record_timing("build_cu12_jupyter_seconds", round(seconds, 1))
    record_timing("jupyter_size_bytes", result["size_bytes"])
    growth = result["size_bytes"] / runtime["size_bytes"] - 1
    print(f"\njupyter: {result['size_bytes'] / 1e9:.2f} GB, +{growth:.1%} over the runtime", file=sys.stderr)
    return BuiltImage(result["tags"][0], result, seconds)


@pytest.fixture(scope="module")
def server(jupyter: BuiltImage) -> Iterator[Server]:
    container = docker_cli("run", "-d", "-p", "127.0.0.1::8888", "--shm-size=1g", jupyter.ref)
    try:
        port = docker_cli("port", container, "8888/tcp").splitlines()[0].rsplit(":", 1)[1]
        deadline = time.monotonic() + 120
        logs = ""
        while time.monotonic() < deadline:
            logs = (
                docker_cli("logs", container)
                + subprocess.run([DOCKER, "logs", container], capture_output=True, text=True).stderr
            )
            if URL_WITH_TOKEN.search(logs):
                break
            time.sleep(1)
        match = URL_WITH_TOKEN.search(logs)
        assert match, f"no URL with a token in the logs:\n{logs[-2000:]}"
        yield Server(container, f"http://127.0.0.1:{port}", match.group(1), logs)
    finally:
        subprocess.run([DOCKER, "rm", "-f", container], capture_output=True)


def test_child_shares_the_runtime_layers(jupyter: BuiltImage, built: BuiltImage, client: docker.DockerClient) -> None:
    runtime_layers = client.images.get(built.ref).attrs["RootFS"]["Layers"]
    jupyter_layers = client.images.get(jupyter.ref).attrs["RootFS"]["Layers"]
    assert jupyter_layers[: len(runtime_layers)] == runtime_layers
    config = client.images.get(jupyter.ref).attrs["Config"]
    assert "/home/torch/work" in (config.get("Volumes") or {})
    assert config["User"] == "1000"
    assert "pytorch-cuda:v2.9-jupyter" in jupyter.result["tags"]


def test_serves_on_all_interfaces_with_a_token(server: Server) -> None:
    assert "0.0.0.0" in server.logs or "hostname" in server.logs or ":8888/lab?token=" in server.logs
    with_token = requests.get(f"{server.base}/api/status", params={"token": server.token}, timeout=10)
    assert with_token.status_code == 200, with_token.text
    assert requests.get(f"{server.base}/api/status", timeout=10).status_code == 403
    assert requests.get(f"{server.base}/api/status", params={"token": "wrong"}, timeout=10).status_code == 403


def test_notebook_runs_on_the_containers_kernel(server: Server) -> None:
    """nbclient (`jupyter execute`) in the container runs the notebook on the image's ipykernel; on CPU the
    fp16 and bf16 cells skip with a clear message."""
    started = time.monotonic()
    result = subprocess.run(
        [
            DOCKER,
            "exec",
            "-i",
            server.container,
            "sh",
            "-c",
            "cat > work/amp.ipynb && jupyter execute --inplace work/amp.ipynb >&2 && cat work/amp.ipynb",
        ],
        input=NOTEBOOK.read_text(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    record_timing("notebook_cpu_seconds", round(time.monotonic() - started, 1))
    assert result.returncode == 0, result.stderr[-3000:]
    executed = json.loads(result.stdout)
    text = "".join("".join(output.get("text", "")) for cell in executed["cells"] for output in cell.get("outputs", []))
    assert "device cpu" in text
    assert "fp32:" in text
    assert "skipped fp16 + GradScaler: no GPU" in text
    assert "skipped bf16: no GPU" in text
    assert re.search(r"fp32\s+\d+\.\d+\s+\d+\.\d+\s+1\.00x", text), text


def test_stops_cleanly_on_sigterm_within_10_s(server: Server) -> None:
    started = time.monotonic()
    docker_cli("stop", "-t", "10", server.container)
    seconds = time.monotonic() - started
    state = json.loads(docker_cli("inspect", "--format", "{{json .State}}", server.container))
    record_timing("jupyter_stop_seconds", round(seconds, 1))
    assert seconds < 10
    assert state["ExitCode"] != 137, state  # not killed: it shut down on SIGTERM
