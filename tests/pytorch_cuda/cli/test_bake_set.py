"""`bake` and `--set` with docker buildx bake's semantics, one test per point (buildx itself reads the file in
test_bake_buildx.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli
from pytorch_cuda.bake import bake_file
from pytorch_cuda.image_build import build_plan
from pytorch_cuda.matrix.build_matrix import load_matrix
from tests.support.git_remote import git, matrix_checkout

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
    found = _bake(capsys, "--set", f"cu128-*.cache-to={cache}", "--set", f"cu128-runtime.output={output}")
    runtime = found["target"]["cu128-runtime"]
    assert runtime["cache-to"] == [cache]
    assert runtime["output"] == [output]
    assert "cache-to" not in found["target"]["cu130-runtime"]


def test_a_repeated_set_on_a_list_appends_and_plus_equals_keeps_the_files(capsys: pytest.CaptureFixture[str]) -> None:
    found = _bake(
        capsys, "--set", "cu128-*.cache-from=type=registry,ref=a", "--set", "cu128-*.cache-from=type=local,src=b"
    )
    assert found["target"]["cu128-runtime"]["cache-from"] == ["type=registry,ref=a", "type=local,src=b"]
    tags = _bake(capsys)["target"]["cu128-runtime"]["tags"]
    replaced = _bake(capsys, "--set", "cu128-runtime.tags=r/x:1", "--set", "cu128-runtime.tags=r/x:2")
    assert replaced["target"]["cu128-runtime"]["tags"] == ["r/x:1", "r/x:2"]  # the file's tags replaced once
    added = _bake(capsys, "--set", "cu128-runtime.tags+=r/x:3")
    assert added["target"]["cu128-runtime"]["tags"] == [*tags, "r/x:3"]
    assert "+= appends to a list" in _refused(capsys, "--set", "cu128-*.pull+=true")


def test_a_pattern_that_matches_no_target_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(capsys, "--set", "cu21.no-cache=true")
    assert "could not find any target matching 'cu21'" in err
    assert "could not find any target matching '*-devl'" in _refused(capsys, "--set", "*-devl.no-cache=true")
    capsys.readouterr()
    assert cli.main(["build", "--target", "cu12", "--dry-run", "--set", "cu99.labels.x=1"]) == 2
    assert "could not find any target matching 'cu99'" in " ".join(capsys.readouterr().err.split())
    assert _bake(capsys, "--set", "cu130-d*.no-cache=true")["target"]["cu130-devel"]["no-cache"] is True


def test_two_images_given_one_tag_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(capsys, "--set", "cu128-*.tags=r/pytorch:x")
    assert "gives the tag r/pytorch:x to both cu128-jupyter and cu128-runtime; a tag names one image" in err
    one = _bake(capsys, "--set", "cu128-jupyter.tags=r/pytorch:x")
    assert one["target"]["cu128-jupyter"]["tags"] == ["r/pytorch:x"]


def test_the_projects_own_labels_are_not_set_keys(capsys: pytest.CaptureFixture[str]) -> None:
    for label in ("org.opencontainers.image.revision", "dev.pytorch-cuda.torch"):
        assert f"the label {label} is the project's own" in _refused(capsys, "--set", f"*.labels.{label}=evil")
        capsys.readouterr()
        assert cli.main(["build", "--target", "cu12", "--dry-run", "--set", f"cu128-*.labels.{label}=evil"]) == 2
    assert (
        _bake(capsys, "--set", "*.labels.org.example.team=ml")["target"]["cu130-devel"]["labels"]["org.example.team"]
        == "ml"
    )


def test_booleans_are_read_as_bake_reads_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert "invalid value maybe for boolean key pull" in _refused(capsys, "--set", "*.pull=maybe")
    assert "invalid value yes for boolean key no-cache" in _refused(capsys, "--set", "*.no-cache=yes")
    found = _bake(capsys, "--set", "*.pull=True", "--set", "cu130-*.pull=f")["target"]
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


@pytest.mark.parametrize(("pattern", "kind"), [("cu12", "alias of cu128"), ("cu128", "target"), ("all", "group")])
def test_an_alias_target_or_group_is_no_set_pattern_as_in_buildx(
    pattern: str, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """buildx matches a --set pattern against bake target names only: `could not find any target matching`."""
    err = _refused(capsys, "--set", f"{pattern}.args.X=1")
    assert f"could not find any target matching {pattern!r}; {pattern!r} is a matrix {kind}" in err
    assert "--set '" in err  # the glob to write instead
    capsys.readouterr()
    assert cli.main(["build", "--target", "cu12", "--dry-run", "--set", f"{pattern}.labels.x=1"]) == 2


def test_the_no_cache_flag_beats_a_set_as_in_buildx(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["build", "--target", "cu12", "--dry-run", "--json", "--set", "*.no-cache=false"]
    capsys.readouterr()
    assert cli.main([*argv, "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out)["no_cache"] is True
    assert cli.main(argv) == 0
    assert json.loads(capsys.readouterr().out)["no_cache"] is False


def test_an_arg_with_no_value_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FROM_ENV", "here")
    monkeypatch.delenv("UNSET_HERE", raising=False)
    found = _bake(capsys, "--set", "*.args.FROM_ENV", "--set", "*.args.UNSET_HERE")["target"]["cu128-runtime"]
    assert found["args"]["FROM_ENV"] == "here"
    assert "UNSET_HERE" not in found["args"]  # buildx leaves an unset one out
    assert "expected target.name=value" in _refused(capsys, "--set", "*.labels.x")


def test_every_key_buildx_takes_is_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sets = [
        "cu128-runtime.context=.",
        "cu128-runtime.dockerfile=D",
        "cu128-runtime.target=final",
        "cu128-runtime.contexts.extra=docker-image://debian",
        f"cu128-runtime.secrets=id=x,src={tmp_path}",
        "cu128-runtime.attest=type=sbom",
        "cu128-runtime.push=true",
        "cu128-runtime.shm-size=2g",
    ]
    found = _bake(capsys, *(f"--set={s}" for s in sets))["target"]["cu128-runtime"]
    assert (found["context"], found["dockerfile"], found["target"], found["shm-size"]) == (".", "D", "final", "2g")
    assert found["contexts"] == {"extra": "docker-image://debian"}
    assert (found["secret"], found["attest"]) == ([f"id=x,src={tmp_path}"], ["type=sbom"])
    assert found["output"] == ["type=image,push=true"]
    assert "requires a name" in _refused(capsys, "--set", "*.contexts=x")
    assert "the network is not a --set key here" in _refused(capsys, "--set", "*.network=host")  # docs/cli.md


def test_bake_takes_a_bake_target_and_its_parents(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(_bake(capsys, "--target", "cu128-runtime")["target"]) == {"cu128-runtime"}
    jupyter = _bake(capsys, "--target", "cu128-jupyter")
    assert set(jupyter["target"]) == {"cu128-jupyter", "cu128-runtime"}  # its named context is a target too


def test_one_target_given_a_tag_twice_keeps_it_once(capsys: pytest.CaptureFixture[str]) -> None:
    found = _bake(capsys, "--set", "cu128-runtime.tags=r/x:1", "--set", "cu128-runtime.tags=r/x:1")
    assert found["target"]["cu128-runtime"]["tags"] == ["r/x:1"]  # buildx's removeDupes; no "collision"


def test_one_bake_file_carries_one_revision_while_the_work_tree_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: each variant's plan read git again, so a tree that turned dirty while bake planned (another process
    editing a tracked file) gave the first targets the clean revision and the last ones (cu130's) `-dirty`: the
    flake of test_bake_buildx.py::test_set_gives_what_buildx_gives on cu130's labels. Now git is read once."""
    root = matrix_checkout(tmp_path)
    planned = build_plan.plan_lineage

    def and_then_an_edit(*args: Any, **kwargs: Any) -> Any:  # the real planning, then someone edits a tracked file
        plans = planned(*args, **kwargs)
        (root / "matrix.yaml").write_text((root / "matrix.yaml").read_text() + "\n# an edit\n", encoding="utf-8")
        return plans

    monkeypatch.setattr(bake_file, "plan_lineage", and_then_an_edit)
    document = bake_file.bake_document(load_matrix(root / "matrix.yaml"), root, ["all"], [], None)
    revisions = {t["labels"]["org.opencontainers.image.revision"] for t in document["target"].values()}
    assert revisions == {git(root, "rev-parse", "HEAD")}
    assert len(document["target"]) == 7
