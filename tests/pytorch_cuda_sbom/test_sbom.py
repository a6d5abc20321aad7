"""The SBOM: dpkg packages merged into cyclonedx-py's document, validated; the build takes it out of the image."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.errors import EngineError
from pytorch_cuda.steps.sbom import collect_sbom
from pytorch_cuda_contract import paths
from pytorch_cuda_sbom.__main__ import main, validation_errors
from pytorch_cuda_sbom.merge import DebPackage, deb_purl, merge, parse_dpkg, parse_os_release
from tests.support.fake_engine import FakeEngine

DPKG = "libc6\t2.41-12+deb13u5\tamd64\ng++\t4:14.2.0-1\tamd64\nadduser\t3.152\tall\n\nlibc6\t2.41-12+deb13u5\tamd64\n"
OS_RELEASE = 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nID=debian\nVERSION_ID="13"\nVERSION_CODENAME=trixie\n'


def python_sbom() -> dict[str, Any]:
    """The shape cyclonedx-py 7.5 writes for a venv (--output-reproducible), cut down to two packages."""
    return {
        "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "version": 1,
        "metadata": {"properties": [{"name": "cdx:reproducible", "value": "true"}]},
        "components": [
            {"bom-ref": "torch==2.9.1", "name": "torch", "purl": "pkg:pypi/torch@2.9.1", "type": "library",
             "version": "2.9.1"},
            {"bom-ref": "numpy==2.5.5", "name": "numpy", "purl": "pkg:pypi/numpy@2.5.5", "type": "library",
             "version": "2.5.5"},
        ],
        "dependencies": [{"ref": "torch==2.9.1", "dependsOn": ["numpy==2.5.5"]}, {"ref": "numpy==2.5.5"}],
    }  # fmt: skip


def test_dpkg_lines_become_sorted_unique_packages() -> None:
    assert parse_dpkg(DPKG) == [
        DebPackage("adduser", "3.152", "all"),
        DebPackage("g++", "4:14.2.0-1", "amd64"),
        DebPackage("libc6", "2.41-12+deb13u5", "amd64"),
    ]
    with pytest.raises(ValueError, match="line 1"):
        parse_dpkg("libc6 2.41\n")


def test_deb_purls_encode_epochs_and_plus_signs() -> None:
    assert deb_purl(DebPackage("g++", "4:14.2.0-1", "amd64"), "debian-13") == (
        "pkg:deb/debian/g%2B%2B@4%3A14.2.0-1?arch=amd64&distro=debian-13"
    )
    assert deb_purl(DebPackage("libc6", "2.41-12", "amd64"), None) == "pkg:deb/debian/libc6@2.41-12?arch=amd64"


def test_merge_adds_debian_packages_and_the_image_as_main_component() -> None:
    document = merge(
        python_sbom(),
        parse_dpkg(DPKG),
        image_name="pytorch-cuda",
        image_version="2.9.1-cuda12.8-cudnn9.10-py3.13-runtime",
        os_release=parse_os_release(OS_RELEASE),
    )
    names = {c["name"]: c for c in document["components"]}
    assert set(names) == {"torch", "numpy", "adduser", "g++", "libc6"}
    assert names["libc6"]["purl"] == "pkg:deb/debian/libc6@2.41-12%2Bdeb13u5?arch=amd64&distro=debian-13"
    assert names["libc6"]["version"] == "2.41-12+deb13u5"
    root = document["metadata"]["component"]
    assert (root["type"], root["name"], root["version"]) == (
        "container",
        "pytorch-cuda",
        "2.9.1-cuda12.8-cudnn9.10-py3.13-runtime",
    )
    assert document["dependencies"][0]["ref"] == root["bom-ref"]
    assert len(document["dependencies"][0]["dependsOn"]) == 5
    assert validation_errors(json.dumps(document), "1.6") is None
    assert python_sbom()["components"][0]["name"] == "torch"  # the input was not changed


def test_validation_catches_a_broken_document() -> None:
    document = python_sbom()
    del document["components"][0]["name"]
    assert validation_errors(json.dumps(document), "1.6") is not None


def test_the_sbom_stage_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "python.cdx.json").write_text(json.dumps(python_sbom()))
    (tmp_path / "dpkg.tsv").write_text(DPKG)
    (tmp_path / "os-release").write_text(OS_RELEASE)
    argv = ["--python-sbom", str(tmp_path / "python.cdx.json"), "--dpkg", str(tmp_path / "dpkg.tsv")]
    argv += ["--os-release", str(tmp_path / "os-release"), "--name", "pytorch-cuda", "--version", "2.9.1-x"]
    assert main([*argv, "--validate", "--output", str(tmp_path / "sbom.cdx.json")]) == 0
    assert "5 components (2 Python, 3 Debian)" in capsys.readouterr().out
    broken = python_sbom()
    broken["components"][0]["type"] = "not-a-type"
    (tmp_path / "python.cdx.json").write_text(json.dumps(broken))
    assert main([*argv, "--validate", "--output", str(tmp_path / "bad.cdx.json")]) == 1
    assert not (tmp_path / "bad.cdx.json").exists()


def test_the_build_writes_the_images_sbom_beside_its_log(tmp_path: Path) -> None:
    engine = FakeEngine(images={"candidate": "sha256:new"})
    summary = collect_sbom(engine, "candidate", "cu128-runtime", tmp_path)
    assert summary.path == tmp_path / "sbom-cu128-runtime.cdx.json"
    assert (summary.components, summary.python, summary.deb, summary.spec_version) == (2, 1, 1, "1.6")
    assert engine.calls == [f"read candidate {paths.SBOM_PATH}"]


@pytest.mark.parametrize(("sbom", "message"), [(None, "has no SBOM"), (b"{}", "not CycloneDX"), (b"[", "not Cyclo")])
def test_an_image_without_a_good_sbom_fails_the_build(tmp_path: Path, sbom: bytes | None, message: str) -> None:
    engine = FakeEngine(images={"candidate": "sha256:new"}, sbom=sbom)
    with pytest.raises(EngineError, match=message):
        collect_sbom(engine, "candidate", "cu128-runtime", tmp_path)


def test_the_sbom_tool_lock_is_checked_like_the_installer_lock(root: Path, tmp_path: Path) -> None:
    from pytorch_cuda.locks.file_format import SBOM_TOOL_LOCK, SBOM_TOOL_VERSION, parse_lock
    from pytorch_cuda.locks.resolving import tool_lock_problem

    committed = (root / SBOM_TOOL_LOCK).read_text()
    assert parse_lock(committed).versions()["cyclonedx-bom"] == SBOM_TOOL_VERSION
    assert all("--hash=sha256:" in entry.text for entry in parse_lock(committed).entries)
    assert tool_lock_problem(root, SBOM_TOOL_LOCK) is None
    (tmp_path / "images").mkdir()
    assert "does not exist" in str(tool_lock_problem(tmp_path, SBOM_TOOL_LOCK))
    (tmp_path / SBOM_TOOL_LOCK).write_text(
        committed.replace(f"cyclonedx-bom=={SBOM_TOOL_VERSION}", "cyclonedx-bom==7.0.0")
    )
    assert f"locks cyclonedx-bom 7.0.0, but the builder pins {SBOM_TOOL_VERSION}" == tool_lock_problem(
        tmp_path, SBOM_TOOL_LOCK
    )
