"""Two containers of the image, one Docker network, one torchrun job: gloo on the CPU across containers.

Each container runs torchrun for one node (c10d rendezvous at node 0's name) with the image's
examples/ddp_check.py; both must exit 0 and report the same parameter checksum and world size 2.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
import uuid
from typing import Any

import docker
import docker.errors
import pytest
import requests.exceptions

from pytorch_cuda_contract import paths
from tests.support.containers import ImageRunner
from tests.support.integration import BuiltImage, record_timing

pytestmark = pytest.mark.integration
TIMEOUT_S = 300


def _reports(output: str) -> list[dict[str, Any]]:
    """The JSON reports in a log; two ranks of one torchrun share a stdout, so a line may hold both."""
    decoder = json.JSONDecoder()
    rows = []
    start = output.find('{"')
    while start != -1:
        try:
            row, end = decoder.raw_decode(output, start)
        except json.JSONDecodeError:
            end = start + 2
        else:
            if isinstance(row, dict) and "ddp_check" in row:
                rows.append(row)
        start = output.find('{"', end)
    return rows


def test_torchrun_across_two_containers(built: BuiltImage, client: docker.DockerClient) -> None:
    suffix = uuid.uuid4().hex[:8]
    network = client.networks.create(f"pytorch-cuda-ddp-{suffix}", driver="bridge")
    names = [f"ddp-node{rank}-{suffix}" for rank in (0, 1)]
    containers = []
    started = time.monotonic()
    try:
        for rank, name in enumerate(names):
            command = [
                "torchrun",
                "--nnodes",
                "2",
                "--nproc-per-node",
                "1",
                "--node-rank",
                str(rank),
                "--rdzv-backend",
                "c10d",
                "--rdzv-id",
                f"ddp-check-{suffix}",
                "--rdzv-endpoint",
                f"{names[0]}:29500",
                paths.DDP_CHECK_PATH,
                "--steps",
                "5",
            ]
            containers.append(
                client.containers.run(
                    built.ref,
                    command,
                    name=name,
                    hostname=name,  # gloo and the c10d store find each other by these names
                    network=network.name,
                    shm_size="1g",
                    environment={"OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": "eth0"},
                    detach=True,
                )
            )
        codes, outputs = [], []
        for container in containers:
            try:
                codes.append(int(container.wait(timeout=TIMEOUT_S)["StatusCode"]))
            except requests.exceptions.RequestException:
                codes.append(124)
            outputs.append(container.logs().decode("utf-8", "replace"))
    finally:
        for container in containers:
            with contextlib.suppress(docker.errors.APIError):
                container.remove(force=True)
        network.remove()
    seconds = time.monotonic() - started
    record_timing("ddp_two_containers_seconds", round(seconds, 1))
    joined = "\n".join(
        f"--- {name} (exit {code})\n{out[-3000:]}" for name, code, out in zip(names, codes, outputs, strict=False)
    )
    assert codes == [0, 0], joined
    reports = [row for output in outputs for row in _reports(output)]
    print(f"\ntwo-container torchrun ({seconds:.1f} s):", *(json.dumps(r) for r in reports), sep="\n", file=sys.stderr)
    assert len(reports) == 2, joined
    assert sorted(r["rank"] for r in reports) == [0, 1]
    assert {r["world_size"] for r in reports} == {2}
    assert {r["backend"] for r in reports} == {"gloo"}
    assert len({r["param_checksum"] for r in reports}) == 1, reports
    assert all(r["all_ranks_equal"] and r["ddp_check"] == "ok" for r in reports)
    assert len({r["host"] for r in reports}) == 2  # two containers, not two processes of one


def test_ddp_check_catches_ranks_that_differ(built: BuiltImage, runner: ImageRunner) -> None:
    """Bare torchrun in one container (the form a GPU host runs): two ranks pass; one nudged rank fails it."""
    command = ["torchrun", "--standalone", "--nproc-per-node", "2", paths.DDP_CHECK_PATH, "--steps", "3"]
    good = runner.run(built.ref, command, environment={"OMP_NUM_THREADS": "1"}, timeout_s=TIMEOUT_S)
    assert good.exit_code == 0, good.output[-3000:]
    reports = _reports(good.output)
    assert len({r["param_checksum"] for r in reports}) == 1
    assert sorted(r["rank"] for r in reports) == [0, 1]
    broken = runner.run(
        built.ref, [*command, "--break-rank", "1"], environment={"OMP_NUM_THREADS": "1"}, timeout_s=TIMEOUT_S
    )
    assert broken.exit_code != 0, broken.output[-3000:]
    rows = _reports(broken.output)
    assert len(rows) == 2, broken.output[-3000:]
    assert all(row["ddp_check"] == "parameters differ across ranks" for row in rows)
    assert len({r["param_checksum"] for r in rows}) == 2
