"""`bake` and `--set` with docker buildx bake's semantics, one test per point (buildx itself reads the file in
test_bake_buildx.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli

ROOT = Path(__file__).resolve().parents[3]
CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


@pytest.fixture(autouse=True)
def _no_ca_from_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        monkeypatch.delenv(variable, raising=False)


def _bake(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    capsys.readouterr()
    assert cli.main(["bake", *argv]) == 0, capsys.readouterr().err
    found: dict[str, Any] = json.loads(capsys.readouterr().out)
    return found


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert cli.main(["bake", *argv]) == 2
    return " ".join(capsys.readouterr().err.split())


def test_a_value_with_commas_is_kept_whole(capsys: pytest.CaptureFixture[str]) -> None:
    cache = "type=registry,ref=r/c,mode=max"
    output = "type=image,name=r/x,push=true"
    found = _bake(capsys, "--set", f"cu12.cache-to={cache}", "--set", f"cu128-runtime.output={output}")
    runtime = found["target"]["cu128-runtime"]
    assert runtime["cache-to"] == [cache]
    assert runtime["output"] == [output]
    assert "cache-to" not in found["target"]["cu130-runtime"]


def test_a_repeated_set_on_a_list_appends_and_plus_equals_keeps_the_files(capsys: pytest.CaptureFixture[str]) -> None:
    found = _bake(capsys, "--set", "cu12.cache-from=type=registry,ref=a", "--set", "cu12.cache-from=type=local,src=b")
    assert found["target"]["cu128-runtime"]["cache-from"] == ["type=registry,ref=a", "type=local,src=b"]
    tags = _bake(capsys)["target"]["cu128-runtime"]["tags"]
    replaced = _bake(capsys, "--set", "cu128-runtime.tags=r/x:1", "--set", "cu128-runtime.tags=r/x:2")
    assert replaced["target"]["cu128-runtime"]["tags"] == ["r/x:1", "r/x:2"]  # the file's tags replaced once
    added = _bake(capsys, "--set", "cu128-runtime.tags+=r/x:3")
    assert added["target"]["cu128-runtime"]["tags"] == [*tags, "r/x:3"]
    assert "+= appends to a list" in _refused(capsys, "--set", "cu12.pull+=true")


def test_a_pattern_that_matches_no_target_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(capsys, "--set", "cu21.no-cache=true")
    assert "could not find any target matching 'cu21' (did you mean 'cu12'?)" in err
    assert "could not find any target matching '*-devl'" in _refused(capsys, "--set", "*-devl.no-cache=true")
    capsys.readouterr()
    assert cli.main(["build", "--target", "cu12", "--dry-run", "--set", "cu99.labels.x=1"]) == 2
    assert "could not find any target matching 'cu99'" in " ".join(capsys.readouterr().err.split())
    assert _bake(capsys, "--set", "all.no-cache=true")["target"]["cu130-devel"]["no-cache"] is True  # a group


def test_two_images_given_one_tag_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(capsys, "--set", "cu12.tags=r/pytorch:x")
    assert "gives the tag r/pytorch:x to both cu128-jupyter and cu128-runtime; a tag names one image" in err
    one = _bake(capsys, "--set", "cu128-jupyter.tags=r/pytorch:x")
    assert one["target"]["cu128-jupyter"]["tags"] == ["r/pytorch:x"]


def test_the_projects_own_labels_are_not_set_keys(capsys: pytest.CaptureFixture[str]) -> None:
    for label in ("org.opencontainers.image.revision", "dev.pytorch-cuda.torch"):
        assert f"the label {label} is the project's own" in _refused(capsys, "--set", f"*.labels.{label}=evil")
        capsys.readouterr()
        assert cli.main(["build", "--target", "cu12", "--dry-run", "--set", f"cu12.labels.{label}=evil"]) == 2
    assert (
        _bake(capsys, "--set", "*.labels.org.example.team=ml")["target"]["cu130-devel"]["labels"]["org.example.team"]
        == "ml"
    )


def test_booleans_are_read_as_bake_reads_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert "invalid value maybe for boolean key pull" in _refused(capsys, "--set", "*.pull=maybe")
    assert "invalid value yes for boolean key no-cache" in _refused(capsys, "--set", "*.no-cache=yes")
    found = _bake(capsys, "--set", "*.pull=True", "--set", "cu13.pull=f")["target"]
    assert (found["cu128-runtime"]["pull"], found["cu130-runtime"]["pull"]) == (True, False)


def test_aliases_and_groups_are_bake_groups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text((ROOT / "matrix.yaml").read_text() + "\ngroups:\n  cuda12: [cu126, cu12]\n")
    groups = _bake(capsys, "--matrix", str(matrix))["group"]
    assert groups["cu12"] == groups["cu128"] == {"targets": ["cu128-jupyter", "cu128-runtime"]}
    assert groups["cu13"]["targets"] == ["cu130-devel", "cu130-jupyter", "cu130-runtime"]
    assert groups["cuda12"]["targets"] == ["cu126-jupyter", "cu126-runtime", "cu128-jupyter", "cu128-runtime"]
    assert groups["default"] == {"targets": ["cu128-runtime"]}  # the alias `default` is bake's default variant


def test_bake_takes_the_ca_bundle_default_its_help_promises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "secret" not in _bake(capsys)["target"]["cu128-runtime"]
    bundle = tmp_path / "ca.pem"
    bundle.write_text(CA)
    monkeypatch.setenv("PIP_CERT", str(bundle))
    assert _bake(capsys)["target"]["cu128-runtime"]["secret"] == [f"id=pip_ca,src={bundle.resolve()}"]
    monkeypatch.setenv("PIP_CERT", str(tmp_path / "missing.pem"))
    assert "does not exist" in _refused(capsys)
