"""What a release attests: in-toto Statements v1 (built and validated by in-toto-attestation) for the CycloneDX
SBOM and the SLSA v1 provenance, whose externalParameters are the run's real inputs (the matrix variant, the
source repository, ref and commit, the workflow).

The provenance predicate is a `Provenance` protobuf of in-toto-attestation, turned into JSON by protobuf's
json_format (SLSA's camelCase names). The SBOM predicate is attached as the SBOM's own JSON: a protobuf `Struct`
stores every number as a double, which would turn CycloneDX's integer `version: 1` into `1.0`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from google.protobuf import json_format
from in_toto_attestation.predicates.provenance.v1 import provenance_pb2
from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
from in_toto_attestation.v1.statement import Statement

from pytorch_cuda.release.build_inputs import lock_uri

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
IN_TOTO_PAYLOAD = "application/vnd.in-toto+json"
SBOM_PREDICATE = "https://cyclonedx.org/bom"
PROVENANCE_PREDICATE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "https://github.com/pytorch-cuda/pytorch-cuda/blob/main/docs/release.md#build-type-v1"


@dataclass(frozen=True)
class Source:
    """Where the image came from: the repository, the ref a release is cut from, and the commit."""

    repository: str  # https://github.com/OWNER/REPO
    ref: str  # refs/tags/v2.9.1
    commit: str  # 40 hex digits


@dataclass(frozen=True)
class BuildRun:
    """Who built it, from what, in which run (a workflow run URL in CI; a host name offline)."""

    builder_id: str
    invocation_id: str
    source: Source
    variant: str  # matrix.yaml's variant, e.g. cu128-runtime
    workflow: str  # the workflow file that ran, e.g. .github/workflows/release.yml
    started_on: datetime | None = None
    finished_on: datetime | None = None
    materials: Mapping[str, str] = field(default_factory=dict)  # URI -> sha256:HEX
    locks: Mapping[str, str] = field(default_factory=dict)  # the checkout's lock files: path -> sha256:HEX
    # $SOURCE_DATE_EPOCH of a build without git (the creation time it stood in for); None: the commit's time
    source_date_epoch: int | None = None


def statement(repository: str, digest: str, predicate_type: str, predicate: Mapping[str, Any]) -> dict[str, Any]:
    """An in-toto Statement v1 about `repository@digest`, validated by in-toto-attestation."""
    algorithm, _, hexdigest = digest.partition(":")
    subject = ResourceDescriptor(name=repository, digest={algorithm: hexdigest}).pb
    built = Statement([subject], predicate_type, {"placeholder": True})
    built.validate()
    document: dict[str, Any] = json_format.MessageToDict(built.pb)
    document["predicate"] = dict(predicate)
    return document


def _descriptor(uri: str, algorithm: str, value: str, name: str = "") -> Any:
    return ResourceDescriptor(name=name, uri=uri, digest={algorithm: value}).pb


def provenance(run: BuildRun) -> dict[str, Any]:
    """A SLSA v1 provenance predicate: the workflow, source and variant as externalParameters; the source commit,
    every given material (the pinned base) and every lock file (`git+REPO@COMMIT#PATH`, named by its path) as
    resolvedDependencies; the builder and the run."""
    predicate = provenance_pb2.Provenance()
    definition = predicate.build_definition
    definition.build_type = BUILD_TYPE
    definition.external_parameters.update(
        {
            "workflow": {"repository": run.source.repository, "ref": run.source.ref, "path": run.workflow},
            "variant": run.variant,
            **({"sourceDateEpoch": str(run.source_date_epoch)} if run.source_date_epoch is not None else {}),
        }
    )
    source = run.source
    definition.resolved_dependencies.append(
        _descriptor(f"git+{source.repository}@{source.ref}", "gitCommit", source.commit)
    )
    for uri, digest in sorted(run.materials.items()):
        algorithm, _, hexdigest = digest.partition(":")
        definition.resolved_dependencies.append(_descriptor(uri, algorithm, hexdigest))
    for path, digest in sorted(run.locks.items()):
        uri = lock_uri(source.repository, source.commit, path)
        definition.resolved_dependencies.append(_descriptor(uri, "sha256", digest.partition(":")[2], name=path))
    details = predicate.run_details
    details.builder.id = run.builder_id
    details.metadata.invocation_id = run.invocation_id
    if run.started_on is not None:
        details.metadata.started_on.FromDatetime(run.started_on)
    if run.finished_on is not None:
        details.metadata.finished_on.FromDatetime(run.finished_on)
    document: dict[str, Any] = json_format.MessageToDict(predicate)
    return document
