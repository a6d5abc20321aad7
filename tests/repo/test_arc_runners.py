"""deploy/arc/*.values.yaml: one ephemeral actions-runner-controller scale set per runner of fleet.yaml, with its
runner group, labels and GPU count; the pod template valid against the Kubernetes schemas (offline, strict)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from pytorch_cuda.matrix.fleet import SELF_HOSTED, load_fleet

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES = "1.37.0"  # the newest schemas kubernetes-validate==1.37.0 ships (as tests/repo/test_k8s_manifest.py)
FLEET = load_fleet(ROOT / "fleet.yaml")


def values(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "deploy" / "arc" / f"{name}.values.yaml").read_text())
    return loaded


def pod_template(template: dict[str, Any]) -> dict[str, Any]:
    """The chart's `template` (a PodTemplateSpec) as a core v1 PodTemplate, which the schemas know."""
    return {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "runner"}, "template": template}


def test_every_fleet_runner_has_a_scale_set_and_no_other() -> None:
    shipped = {path.name.removesuffix(".values.yaml") for path in (ROOT / "deploy" / "arc").glob("*.values.yaml")}
    assert shipped == set(FLEET.runners)


@pytest.mark.parametrize("name", sorted(FLEET.runners))
def test_the_scale_set_matches_fleet_yaml(name: str) -> None:
    runner, chart = FLEET.runners[name], values(name)
    assert chart["runnerGroup"] == runner.group
    assert [SELF_HOSTED, *chart["scaleSetLabels"]] == list(runner.labels)
    spec = chart["template"]["spec"]
    limits = [c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu") for c in spec["containers"]]
    assert sum(limit or 0 for limit in limits) == runner.gpus


@pytest.mark.parametrize("name", sorted(FLEET.runners))
def test_the_runners_are_ephemeral_and_the_template_validates(name: str) -> None:
    chart = values(name)
    assert chart["minRunners"] == 0  # a pod per job, none idle
    spec = chart["template"]["spec"]
    assert spec["restartPolicy"] == "Never"
    assert all(set(volume) == {"name", "emptyDir"} for volume in spec["volumes"])  # nothing outlives the pod
    assert spec["automountServiceAccountToken"] is False
    kubernetes_validate.validate(pod_template(chart["template"]), KUBERNETES, strict=True)


def test_a_broken_template_fails_validation() -> None:
    template = values("h200")["template"]
    template["spec"]["containers"][0]["resource"] = template["spec"]["containers"][0].pop("securityContext")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(pod_template(template), KUBERNETES, strict=True)
