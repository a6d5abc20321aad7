"""What a release signs: a signature payload over the image digest, and in-toto Statements (v1) for the SBOM
(CycloneDX) and the SLSA v1 provenance; each goes into a DSSE envelope (attestations.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
IN_TOTO_PAYLOAD = "application/vnd.in-toto+json"
SIGNATURE_PAYLOAD = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_TYPE = "cosign container image signature"
SBOM_PREDICATE = "https://cyclonedx.org/bom"
PROVENANCE_PREDICATE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "https://github.com/pytorch-cuda/pytorch-cuda/blob/main/docs/release.md#build-type-v1"


@dataclass(frozen=True)
class Kind:
    """One thing attached to a released image: its tag suffix, DSSE payload type and (for a Statement) predicate."""

    name: str
    payload_type: str
    predicate_type: str | None


SIGNATURE = Kind("sig", SIGNATURE_PAYLOAD, None)
SBOM = Kind("sbom", IN_TOTO_PAYLOAD, SBOM_PREDICATE)
PROVENANCE = Kind("provenance", IN_TOTO_PAYLOAD, PROVENANCE_PREDICATE)
KINDS = (SIGNATURE, SBOM, PROVENANCE)


def attachment_tag(digest: str, kind: Kind) -> str:
    """`sha256-<hex>.<kind>`: found from the digest alone, on registries without the OCI referrers API too."""
    algorithm, _, hexdigest = digest.partition(":")
    return f"{algorithm}-{hexdigest}.{kind.name}"


def canonical(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def signature_payload(repository: str, digest: str) -> dict[str, Any]:
    return {
        "critical": {
            "identity": {"docker-reference": repository},
            "image": {"docker-manifest-digest": digest},
            "type": SIGNATURE_TYPE,
        },
        "optional": {},
    }


def statement(repository: str, digest: str, predicate_type: str, predicate: Mapping[str, Any]) -> dict[str, Any]:
    algorithm, _, hexdigest = digest.partition(":")
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": repository, "digest": {algorithm: hexdigest}}],
        "predicateType": predicate_type,
        "predicate": dict(predicate),
    }


@dataclass(frozen=True)
class BuildRun:
    """Who built it and in which run (the CI's identity: a workflow run URL; a host name offline)."""

    builder_id: str
    invocation_id: str
    started_on: str | None = None
    finished_on: str | None = None


def provenance(labels: Mapping[str, str], run: BuildRun, materials: Mapping[str, str]) -> dict[str, Any]:
    """A SLSA v1 provenance predicate from the image's own labels (source, revision, variant, pins)."""
    parameters = {
        key: value
        for key, value in sorted(labels.items())
        if key.startswith(("dev.pytorch-cuda.", "org.opencontainers.image."))
    }
    source = labels.get("org.opencontainers.image.source")
    revision = labels.get("org.opencontainers.image.revision")
    dependencies: list[dict[str, Any]] = []
    if source and revision:
        dependencies.append({"uri": f"git+{source}", "digest": {"gitCommit": revision}})
    for uri, digest in sorted(materials.items()):
        algorithm, _, hexdigest = digest.partition(":")
        dependencies.append({"uri": uri, "digest": {algorithm: hexdigest}})
    metadata: dict[str, str] = {"invocationId": run.invocation_id}
    if run.started_on:
        metadata["startedOn"] = run.started_on
    if run.finished_on:
        metadata["finishedOn"] = run.finished_on
    return {
        "buildDefinition": {
            "buildType": BUILD_TYPE,
            "externalParameters": {"labels": parameters},
            "resolvedDependencies": dependencies,
        },
        "runDetails": {"builder": {"id": run.builder_id}, "metadata": metadata},
    }
