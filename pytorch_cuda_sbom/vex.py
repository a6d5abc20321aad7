"""A CycloneDX 1.6 VEX document: the security lane's findings about the components an image's SBOM lists, each
vulnerability naming the component it affects by package URL (the SBOM's bom-ref for it) and what is done about
it. Standard library only, like the rest of this package; validated against CycloneDX's schema in the tests."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SPEC_VERSION = "1.6"


@dataclass(frozen=True)
class VexEntry:
    purl: str  # the affected component (pkg:pypi/NAME@VERSION, pkg:deb/debian/NAME@VERSION?arch=amd64)
    name: str
    version: str
    ids: tuple[str, ...]  # the advisory's id, then its aliases
    fix_versions: tuple[str, ...]
    description: str
    source: str  # the database that published it


def _source(ident: str) -> dict[str, str]:
    if ident.startswith("CVE-"):
        return {"name": "NVD", "url": f"https://nvd.nist.gov/vuln/detail/{ident}"}
    if ident.startswith("GHSA-"):
        return {"name": "GitHub", "url": f"https://github.com/advisories/{ident}"}
    if ident.startswith("PYSEC-"):
        return {"name": "PyPA", "url": f"https://osv.dev/vulnerability/{ident}"}
    return {"name": ident.split(":", maxsplit=1)[0] or "unknown"}


def _vulnerability(entry: VexEntry, index: int) -> dict[str, Any]:
    fixed = entry.fix_versions
    detail = (
        f"fixed in {', '.join(fixed)}; the security lane opens a pull request that moves the pin"
        if fixed
        else "no fixed version is published; the security lane opens an issue"
    )
    return {
        "bom-ref": f"vulnerability-{index}",
        "id": entry.ids[0],
        "source": _source(entry.ids[0]),
        "references": [{"id": alias, "source": _source(alias)} for alias in entry.ids[1:]],
        "description": entry.description,
        "recommendation": f"upgrade {entry.name} to {fixed[0]}" if fixed else "no fixed version yet",
        "analysis": {"state": "in_triage", "response": ["update"] if fixed else ["can_not_fix"], "detail": detail},
        "affects": [{"ref": entry.purl, "versions": [{"version": entry.version, "status": "affected"}]}],
        "properties": [{"name": "pytorch-cuda:advisory-source", "value": entry.source}],
    }


def vex_document(entries: Sequence[VexEntry], tool_version: str, timestamp: str) -> dict[str, Any]:
    """The VEX BOM: the affected components (bom-ref = purl, as the SBOM's) and one vulnerability per advisory."""
    components: dict[str, dict[str, Any]] = {}
    for entry in entries:
        components.setdefault(
            entry.purl,
            {
                "type": "library",
                "bom-ref": entry.purl,
                "name": entry.name,
                "version": entry.version,
                "purl": entry.purl,
            },
        )
    return {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": f"urn:uuid:{uuid.uuid4()}",
        "version": 1,
        "metadata": {
            "timestamp": timestamp,
            "tools": {"components": [{"type": "application", "name": "pytorch-cuda audit", "version": tool_version}]},
        },
        "components": sorted(components.values(), key=lambda c: str(c["bom-ref"])),
        "vulnerabilities": [_vulnerability(entry, n) for n, entry in enumerate(entries, start=1)],
    }
