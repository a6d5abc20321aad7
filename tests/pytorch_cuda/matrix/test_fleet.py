"""fleet.yaml: the GPU runners' labels and GPU counts, declared once and validated."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pytorch_cuda.matrix.fleet import Fleet, FleetError, load_fleet

ROOT = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def runner(gpus: int, *labels: str) -> dict[str, object]:
    return {"group": "gpu-conformance", "gpu": "NVIDIA H200", "gpus": gpus, "labels": ["self-hosted", *labels]}


def fleet_of(runners: object, builder: object = None) -> dict[str, object]:
    return {"schema": 1, "builder": builder or {"labels": ["ubuntu-24.04"]}, "runners": runners}


def test_the_committed_fleet_loads() -> None:
    fleet = load_fleet(ROOT / "fleet.yaml")
    assert fleet.builder.labels == ("ubuntu-24.04",)
    assert set(fleet.runners) == {"h200", "h200x2"}
    assert fleet.runners["h200"].require_args == ("--require-gpu",)
    assert fleet.runners["h200x2"].require_args == ("--require-gpu", "--require-gpus", "2")


def test_actionlint_knows_exactly_the_fleets_custom_labels() -> None:
    """The workflows take their labels from fleet.yaml; .github/actionlint.yaml must declare the same ones."""
    declared = yaml.safe_load((ROOT / ".github" / "actionlint.yaml").read_text(encoding="utf-8"))
    assert set(declared["self-hosted-runner"]["labels"]) == load_fleet(ROOT / "fleet.yaml").custom_labels()


@pytest.mark.parametrize(
    ("runners", "needle"),
    [
        ({"a": {"group": "g", "gpu": "H200", "gpus": 1, "labels": ["gpu-h200", "x64"]}}, "must include 'self-hosted'"),
        ({"a": runner(0, "gpu-h200")}, "greater than or equal to 1"),
        ({"a": runner(1, "gpu-h200"), "b": runner(2, "gpu-h200", "gpus-2")}, "are all labels of runner 'b'"),
        ({"a": runner(1, "gpu h200")}, "is not a runner label"),
        ({"a": runner(1, "gpu-h200", "gpu-h200")}, "name a label twice"),
        ({"A": runner(1, "gpu-h200")}, "is not a runner name"),
        ({"a": {**runner(1, "gpu-h200"), "count": 3}}, "Extra inputs are not permitted"),
        ({}, "at least 1 item"),
    ],
)
def test_a_bad_fleet_is_one_paragraph_naming_the_key(tmp_path: Path, runners: object, needle: str) -> None:
    with pytest.raises(FleetError) as caught:
        load_fleet(write(tmp_path, fleet_of(runners)))
    assert needle in caught.value.cause
    assert "fleet.yaml does not validate" in caught.value.cause
    assert "build.py ci-matrix" in caught.value.fix


def test_a_missing_fleet_file_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(FleetError, match="does not exist") as caught:
        load_fleet(tmp_path / "nope.yaml")
    assert "--fleet PATH" in caught.value.fix


def test_bad_yaml_is_a_fleet_error(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text("runners: [unclosed\n", encoding="utf-8")
    with pytest.raises(FleetError, match="cannot read"):
        load_fleet(path)


def test_custom_labels_leave_out_githubs_own() -> None:
    fleet = Fleet.model_validate(fleet_of({"a": runner(1, "linux", "x64", "gpu-t4")}))
    assert fleet.custom_labels() == {"gpu-t4"}


def test_a_self_hosted_builders_labels_are_custom_labels_too() -> None:
    builder = {"labels": ["self-hosted", "linux", "builder-cache"]}
    fleet = Fleet.model_validate(fleet_of({"a": runner(1, "gpu-t4")}, builder))
    assert fleet.custom_labels() == {"gpu-t4", "builder-cache"}


def test_a_fleet_without_a_builder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FleetError, match="at key 'builder': Field required"):
        load_fleet(write(tmp_path, {"schema": 1, "runners": {"a": runner(1, "gpu-t4")}}))
