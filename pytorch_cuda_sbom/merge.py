"""Merge dpkg's package list into a CycloneDX JSON document as ``pkg:deb/debian/<name>@<version>?arch=<arch>``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

# What the sbom stage runs: one line per installed package, tab-separated.
DPKG_QUERY_FORMAT = r"${Package}\t${Version}\t${Architecture}\n"
_PURL_SAFE = ".-_~"


@dataclass(frozen=True)
class DebPackage:
    name: str
    version: str
    arch: str


def parse_dpkg(text: str) -> list[DebPackage]:
    """``dpkg-query -W -f '${Package}\\t${Version}\\t${Architecture}\\n'`` output, one package per line."""
    packages: dict[tuple[str, str], DebPackage] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not all(fields):
            raise ValueError(f"dpkg line {number} is not 'name<TAB>version<TAB>arch': {line!r}")
        package = DebPackage(*fields)
        packages[(package.name, package.arch)] = package
    return sorted(packages.values(), key=lambda p: (p.name, p.arch))


def parse_os_release(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    return {key.strip(): value.strip().strip('"') for key, value in pairs}


def deb_purl(package: DebPackage, distro: str | None) -> str:
    """The package URL of a Debian package (purl spec, type deb): name and version percent-encoded."""
    qualifiers = f"arch={quote(package.arch, safe=_PURL_SAFE)}"
    if distro:
        qualifiers += f"&distro={quote(distro, safe=_PURL_SAFE)}"
    name, version = quote(package.name, safe=_PURL_SAFE), quote(package.version, safe=_PURL_SAFE)
    return f"pkg:deb/debian/{name}@{version}?{qualifiers}"


def deb_component(package: DebPackage, distro: str | None) -> dict[str, Any]:
    purl = deb_purl(package, distro)
    return {
        "type": "library",
        "bom-ref": purl,
        "name": package.name,
        "version": package.version,
        "purl": purl,
        "properties": [{"name": "pytorch-cuda:package-manager", "value": "dpkg"}],
    }


def merge(
    python_sbom: Mapping[str, Any],
    debs: Sequence[DebPackage],
    *,
    image_name: str,
    image_version: str,
    os_release: Mapping[str, str],
) -> dict[str, Any]:
    """One SBOM for the image: the venv's components (as cyclonedx-py found them) and the Debian packages,
    with the image as the main component, depending on all of them."""
    document: dict[str, Any] = json.loads(json.dumps(python_sbom))  # a deep copy of plain JSON
    distro = (
        f"{os_release['ID']}-{os_release['VERSION_ID']}" if "ID" in os_release and "VERSION_ID" in os_release else None
    )
    components: list[dict[str, Any]] = list(document.get("components", []))
    taken = {c.get("bom-ref") for c in components}
    for package in debs:
        component = deb_component(package, distro)
        if component["bom-ref"] not in taken:
            taken.add(component["bom-ref"])
            components.append(component)
    root_ref = f"{image_name}:{image_version}"
    metadata = document.setdefault("metadata", {})
    metadata["component"] = {
        "type": "container",
        "bom-ref": root_ref,
        "name": image_name,
        "version": image_version,
        "description": f"{image_name} image on {os_release.get('PRETTY_NAME', 'Debian')}",
    }
    document["components"] = components
    dependencies = [d for d in document.get("dependencies", []) if d.get("ref") != root_ref]
    refs = sorted(str(c["bom-ref"]) for c in components if c.get("bom-ref"))
    document["dependencies"] = [{"ref": root_ref, "dependsOn": refs}, *dependencies]
    return document
