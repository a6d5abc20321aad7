"""A CycloneDX 1.6 VEX document: the security lane's findings about the components an image's SBOM lists, each
vulnerability naming the component it affects by package URL (the SBOM's bom-ref for it) and what is done about
it. Standard library only, like the rest of this package; validated against CycloneDX's schema in the tests."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

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
    analysis: Mapping[str, str] | None = None  # a committed triage decision: state, justification, detail


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
    analysis: dict[str, Any] = {"state": "in_triage", "response": ["update"] if fixed else ["can_not_fix"]}
    analysis["detail"] = detail
    if entry.analysis:  # what a person decided (the triage file), in CycloneDX's words
        analysis = {key: value for key, value in entry.analysis.items() if value}
    return {
        "bom-ref": f"vulnerability-{index}",
        "id": entry.ids[0],
        "source": _source(entry.ids[0]),
        "references": [{"id": alias, "source": _source(alias)} for alias in entry.ids[1:]],
        "description": entry.description,
        "recommendation": f"upgrade {entry.name} to {fixed[0]}" if fixed else "no fixed version yet",
        "analysis": analysis,
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


def purl_key(purl: str) -> tuple[str, str, str]:
    """(type, name, version) of a package URL, as its tools may spell it differently: percent-decoded, qualifiers
    left out; a PyPI name in its PEP 503 form, and its version without a local label (+cu128), as advisories
    name it."""
    head, _, _ = unquote(purl).partition("?")
    kind, _, rest = head.removeprefix("pkg:").partition("/")
    name, _, version = rest.rpartition("@")
    if kind == "pypi":
        name, version = re.sub(r"[-_.]+", "-", name).lower(), version.split("+", 1)[0]
    return kind, name, version


def _components(bom: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for component in bom.get("components", []):
        yield component
        yield from _components(component)


def embed(sbom: Mapping[str, Any], vex: Mapping[str, Any]) -> dict[str, Any]:
    """The SBOM with the VEX's vulnerabilities in it (CycloneDX keeps them in the BOM itself), each pointing at
    the SBOM's own bom-ref of the component it affects (matched by package URL); a vulnerability of no component
    this SBOM lists (another image's lock) is left out. The SBOM's earlier vulnerabilities are replaced."""
    refs = {purl_key(str(c["purl"])): str(c.get("bom-ref", c["purl"])) for c in _components(sbom) if c.get("purl")}
    kept: list[dict[str, Any]] = []
    for vulnerability in vex.get("vulnerabilities", []):
        affects = [
            {**a, "ref": refs[purl_key(a["ref"])]}
            for a in vulnerability.get("affects", [])
            if purl_key(a["ref"]) in refs
        ]
        if affects:
            kept.append({**vulnerability, "bom-ref": f"vulnerability-{len(kept) + 1}", "affects": affects})
    return {**sbom, "vulnerabilities": kept}
