"""The built image carries its SBOM (CycloneDX JSON): valid against the schema, listing torch and libc6 at the
versions really installed; the build wrote the same file beside its JSON; the SBOM tool is not in the image."""

from __future__ import annotations

import json
import sys
from typing import Any

import docker
import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from pytorch_cuda.engine.docker_engine import read_container_file
from pytorch_cuda_contract import paths
from tests.support.containers import ImageRunner
from tests.support.integration import BuiltImage

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def sbom_bytes(built: BuiltImage, client: docker.DockerClient) -> bytes:
    container = client.containers.create(built.ref, ["true"], network_disabled=True)
    try:
        raw = read_container_file(container, paths.SBOM_PATH)
    finally:
        container.remove(force=True)
    assert raw is not None, f"{built.ref} has no {paths.SBOM_PATH}"
    return raw


def _component(document: dict[str, Any], name: str, purl_type: str) -> dict[str, Any]:
    found = [c for c in document["components"] if c["name"] == name and c["purl"].startswith(f"pkg:{purl_type}/")]
    assert len(found) == 1, (name, found)
    return dict(found[0])


def test_sbom_validates_against_the_cyclonedx_schema(sbom_bytes: bytes) -> None:
    document = json.loads(sbom_bytes)
    assert document["bomFormat"] == "CycloneDX"
    error = JsonStrictValidator(SchemaVersion.from_version(document["specVersion"])).validate_str(sbom_bytes.decode())
    assert error is None, str(error)


def test_sbom_lists_torch_and_libc6_at_their_installed_versions(
    sbom_bytes: bytes, built: BuiltImage, runner: ImageRunner
) -> None:
    document = json.loads(sbom_bytes)
    probe = runner.run(
        built.ref,
        [
            "sh",
            "-c",
            "dpkg-query -W -f='${Version}\\n' libc6; "
            "python -c 'import importlib.metadata as m; print(m.version(\"torch\"))'",
        ],
    )
    libc6_version, torch_version = probe.output.split()[-2:]
    torch = _component(document, "torch", "pypi")
    assert torch["version"] == torch_version
    assert torch_version.startswith("2.9.1")
    assert torch["purl"] == f"pkg:pypi/torch@{torch_version}"
    libc6 = _component(document, "libc6", "deb")
    assert libc6["version"] == libc6_version
    assert libc6["purl"].startswith("pkg:deb/debian/libc6@")
    assert "arch=amd64" in libc6["purl"]
    main = document["metadata"]["component"]
    assert (main["type"], main["version"]) == ("container", "2.9.1-cuda12.8-cudnn9.10-py3.13-runtime")
    purls = [c["purl"] for c in document["components"]]
    python, deb = sum(p.startswith("pkg:pypi/") for p in purls), sum(p.startswith("pkg:deb/") for p in purls)
    print(f"\nSBOM: {len(purls)} components, {python} Python, {deb} Debian", file=sys.stderr)
    assert python >= 25
    assert deb >= 100
    assert "nvidia-cudnn-cu12" in {c["name"] for c in document["components"]}


def test_the_build_wrote_the_same_sbom_beside_its_json(sbom_bytes: bytes, built: BuiltImage) -> None:
    summary = built.result["sbom"]
    assert summary["in_image"] == paths.SBOM_PATH
    with open(summary["path"], "rb") as written:
        assert written.read() == sbom_bytes
    assert summary["components"] == len(json.loads(sbom_bytes)["components"])


def test_the_sbom_tool_stays_out_of_the_image(built: BuiltImage, runner: ImageRunner) -> None:
    finished = runner.run(
        built.ref,
        ["sh", "-c", "test ! -e /opt/sbom-tool && ! python -c 'import cyclonedx' 2>/dev/null && echo absent"],
    )
    assert finished.output.strip().splitlines()[-1] == "absent", finished.output
