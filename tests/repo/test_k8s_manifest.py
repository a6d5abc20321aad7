"""deploy/k8s/torchrun-2node.yaml: valid against the Kubernetes schemas (offline), and wired as README says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "deploy" / "k8s" / "torchrun-2node.yaml"
KUBERNETES = "1.37.0"  # the newest schemas kubernetes-validate==1.37.0 ships


def documents(text: str | None = None) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text or MANIFEST.read_text(encoding="utf-8")) if doc]


def by_kind() -> tuple[dict[str, Any], dict[str, Any]]:
    kinds = {doc["kind"]: doc for doc in documents()}
    assert set(kinds) == {"Service", "Job"}
    return kinds["Service"], kinds["Job"]


def validate_all(docs: list[dict[str, Any]]) -> None:
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)


def test_every_resource_validates_strictly_against_the_kubernetes_schemas() -> None:
    validate_all(documents())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("runAsNonRoot: true", 'runAsNonRoot: "yes"'),
        ("  completions: 2", "  completions: two"),
        ("          resources:\n", "          resource:\n"),  # strict: an unknown field
        ("      containers:\n", "      container:\n"),  # and then no containers
    ],
)
def test_a_broken_manifest_fails_validation(old: str, new: str) -> None:
    text = MANIFEST.read_text(encoding="utf-8")
    assert old in text
    broken = documents(text.replace(old, new, 1))
    with pytest.raises(kubernetes_validate.ValidationError):
        validate_all(broken)


def test_two_indexed_pods_find_pod_0_through_the_headless_service() -> None:
    service, job = by_kind()
    pod = job["spec"]["template"]["spec"]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True
    assert pod["subdomain"] == service["metadata"]["name"]
    assert service["spec"]["selector"] == {"job-name": job["metadata"]["name"]}  # the label the Job controller sets
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 2
    args = pod["containers"][0]["args"]
    endpoint = args[args.index("--rdzv-endpoint") + 1]
    assert endpoint == f"{job['metadata']['name']}-0.{service['metadata']['name']}:29500"
    assert service["spec"]["ports"][0]["port"] == 29500
    assert args[args.index("--nnodes") + 1] == str(job["spec"]["completions"])
    assert args[args.index("--rdzv-backend") + 1] == "c10d"
    assert args[0] == "torchrun"
    assert args[-1] == "/opt/pytorch-cuda/examples/ddp_check.py"
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["topologyKey"] == "kubernetes.io/hostname"


def test_the_pod_runs_as_the_images_user_with_gpus_and_shared_memory() -> None:
    _, job = by_kind()
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 1000
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["NCCL_NVLS_ENABLE"] == "0"
    gpus = container["resources"]["limits"]["nvidia.com/gpu"]
    assert env["GPUS"] == str(gpus)  # torchrun starts one worker per GPU of the pod
    args = container["args"]
    assert args[args.index("--nproc-per-node") + 1] == "$(GPUS)"
    shm = next(m for m in container["volumeMounts"] if m["mountPath"] == "/dev/shm")
    volume = next(v for v in pod["volumes"] if v["name"] == shm["name"])
    assert volume["emptyDir"]["medium"] == "Memory"
    assert "command" not in container  # args only: the image's entry point (tini) stays PID 1
