"""The entry point of the real image: banner on a TTY only, warnings with fixes, the command unchanged."""

from __future__ import annotations

import json
import time

import docker
import pytest

from tests.support.docker_cli import docker as docker_cli
from tests.support.docker_cli import docker_run
from tests.support.integration import BuiltImage

pytestmark = pytest.mark.integration

BANNER_VERSIONS = "PyTorch 2.9.1+cu128  CUDA 12.8  cuDNN 9.10.2  NCCL 2.27.5"


def test_tini_is_pid_1_and_runs_the_entry_script(built: BuiltImage, client: docker.DockerClient) -> None:
    config = client.images.get(built.ref).attrs["Config"]
    assert config["Entrypoint"] == ["/usr/bin/tini", "--", "/usr/local/bin/pytorch-cuda-entry"]
    assert docker_run(built.ref, "cat", "/proc/1/comm").output.strip() == "tini"


def test_interactive_start_prints_the_banner(built: BuiltImage) -> None:
    ran = docker_run(built.ref, "echo", "the command ran", options=("-t", "--shm-size=2g"))
    assert ran.code == 0, ran.output
    assert BANNER_VERSIONS in ran.output
    assert "GPUs:    none visible" in ran.output
    assert "conformance" in ran.output
    assert "WARNING: no GPU is visible" in ran.output
    assert "pass --gpus all, or install the NVIDIA Container Toolkit" in ran.output
    assert "shm" not in ran.output  # 2 GiB is enough
    assert ran.output.index(BANNER_VERSIONS) < ran.output.index("the command ran")


def test_small_shm_warns_with_its_fix(built: BuiltImage) -> None:
    ran = docker_run(built.ref, "true", options=("-t", "--shm-size=64m"))
    assert "/dev/shm is 64 MiB, under 1 GiB" in ran.output
    assert "run the container with --ipc=host or --shm-size=1g (or larger)" in ran.output


@pytest.mark.parametrize(
    "options", [(), ("-t", "-e", "PYTORCH_CUDA_QUIET=1")], ids=["stdin-not-a-tty", "PYTORCH_CUDA_QUIET"]
)
def test_silent_when_not_interactive_or_quiet(built: BuiltImage, options: tuple[str, ...]) -> None:
    ran = docker_run(built.ref, "echo", "only this", options=(*options, "--shm-size=64m"))
    assert ran.output == "only this\n"


def test_exit_status_passes_through(built: BuiltImage) -> None:
    assert docker_run(built.ref, "sh", "-c", "exit 7").code == 7
    assert docker_run(built.ref, "python", "-c", "import sys; sys.exit(3)", options=("-t",)).code == 3


def test_arguments_pass_unchanged(built: BuiltImage) -> None:
    ran = docker_run(built.ref, "python", "-c", "import sys; print(sys.argv[1:])", "a b", "", "$HOME", "*")
    assert ran.output.strip() == "['a b', '', '$HOME', '*']"


def test_sigterm_reaches_the_command(built: BuiltImage) -> None:
    """`docker stop` sends SIGTERM to tini, which passes it to the command: its handler answers (exit 42)."""
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: (print('got SIGTERM', flush=True), sys.exit(42)))\n"
        "print('ready', flush=True)\n"
        "time.sleep(120)\n"
    )
    container = docker_cli("run", "-d", built.ref, "python", "-c", code)
    try:
        deadline = time.monotonic() + 60
        while "ready" not in docker_cli("logs", container) and time.monotonic() < deadline:
            time.sleep(0.5)
        started = time.monotonic()
        docker_cli("stop", "-t", "20", container)
        stopped_in = time.monotonic() - started
        state = json.loads(docker_cli("inspect", "--format", "{{json .State}}", container))
        assert state["ExitCode"] == 42
        assert "got SIGTERM" in docker_cli("logs", container)
        assert stopped_in < 10  # no wait for the SIGKILL after -t 20
    finally:
        docker_cli("rm", "-f", container)


def test_info_text_and_json(built: BuiltImage) -> None:
    text = docker_run(built.ref, "pytorch-cuda-info", options=("--shm-size=2g",))
    assert text.code == 0, text.output
    assert "torch:      2.9.1+cu128" in text.output
    assert "cu128-runtime (CUDA 12.8, driver >= 570.26" in text.output
    assert "pass --gpus all" in text.output
    raw = docker_run(built.ref, "pytorch-cuda-info", "--json", options=("--shm-size=64m",))
    data = json.loads(raw.output)
    assert (data["torch"], data["cuda"], data["cudnn"], data["nccl"]) == ("2.9.1+cu128", "12.8", "9.10.2", "2.27.5")
    assert data["gpus"] == []
    assert data["image"]["min_driver"] == "570.26"
    assert [w["fix"] for w in data["warnings"]] == [
        "pass --gpus all, or install the NVIDIA Container Toolkit",
        "run the container with --ipc=host or --shm-size=1g (or larger)",
    ]
