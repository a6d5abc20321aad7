"""One stored run: its results document, what it tested (the subject) and the fault it ran under, if any."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pytorch_cuda.errors import UserError
from pytorch_cuda_contract.results_file import ConformanceResults, parse_results
from pytorch_cuda_contract.results_model import image_label

RECORD_KIND: Final = "pytorch-cuda-stored-run"
RECORD_SCHEMA: Final = 1
DIGEST: Final = re.compile(r"^sha256:[0-9a-f]{64}$")


class StoreError(UserError):
    """A results file that cannot be stored, or a store that cannot be read or written (exit 2)."""


@dataclass(frozen=True)
class RunSubject:
    """What a run tested: an image by digest, the image's stack carried to a bare host by its lock, or a bare host
    by its torch and CUDA versions."""

    kind: str  # image | carried | bare
    key: str  # the folder name under runs/
    label: str  # for people: the image reference or "bare host, torch X, CUDA Y"
    digest: str | None
    torch: str | None
    cuda: str | None


@dataclass(frozen=True)
class Record:
    """A stored run: ``sha256`` names it (the sha256 of ``canonical_bytes(results_document)``)."""

    sha256: str
    subject: RunSubject
    fault: str | None  # the fault it ran under (injected on purpose): stored apart, judged, never a baseline
    source_name: str  # the file name it was ingested from
    results_document: Mapping[str, Any]
    control: str | None = None  # a legitimate setup it ran under (a control): stored apart, never a baseline

    def results(self) -> ConformanceResults:
        return parse_results(json.dumps(self.results_document), source=f"{self.subject.key}/{self.sha256}.json")

    def document(self) -> dict[str, Any]:
        return {
            "kind": RECORD_KIND,
            "schema": RECORD_SCHEMA,
            "sha256": self.sha256,
            "subject": {
                "kind": self.subject.kind,
                "key": self.subject.key,
                "label": self.subject.label,
                "digest": self.subject.digest,
                "torch": self.subject.torch,
                "cuda": self.subject.cuda,
            },
            "fault": self.fault,
            "control": self.control,
            "source_name": self.source_name,
            "results": self.results_document,
        }


def canonical_bytes(document: Mapping[str, Any]) -> bytes:
    """The one serialisation a run is named by: sorted keys, no spaces, UTF-8 (JSON's NaN spelling kept)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def results_sha256(document: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(document)).hexdigest()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", text).strip("_")


def subject_of(results: ConformanceResults, image_digest: str | None = None) -> RunSubject:
    """The run's subject: its image digest (the file's, or ``image_digest`` given for a file that lacks one),
    else the carried stack (its variant and lock), else a bare host (no image named) keyed by torch and CUDA; an
    image run without a digest is refused."""
    torch = results.environment.get("torch")
    cuda = results.environment.get("cuda")
    torch_text, cuda_text = (str(torch) if torch else None), (str(cuda) if cuda else None)
    recorded = results.image.digest
    if image_digest is not None and recorded is not None and recorded != image_digest:
        raise StoreError(
            f"{results.source} records image digest {recorded}, not the {image_digest} given with --image-digest",
            "drop --image-digest (the file names its image), or pass the results of the image you named",
        )
    digest = recorded or image_digest
    if digest is not None:
        if not DIGEST.match(digest):
            raise StoreError(
                f"{results.source}: image digest {digest!r} is not sha256:<64 hex digits>",
                "pass the digest the image was pulled by (docker inspect --format '{{.RepoDigests}}' IMAGE)",
            )
        label = f"{image_label(results)} @{digest[:19]}"
        return RunSubject("image", f"image-{digest.replace(':', '-')}", label, digest, torch_text, cuda_text)
    carried = results.stack.carried
    if carried is not None:  # the image's stack on a bare host: keyed by the lock it was carried from
        key = f"carried-{_slug(carried.variant)}-{carried.lock_sha256[:16]}"
        label = f"{carried.variant} stack carried to a bare host, torch {torch_text}, CUDA {cuda_text}"
        return RunSubject("carried", key, label, None, torch_text, cuda_text)
    target = results.manifest_content.get("target")
    if results.image.ref or (target and target != "bare-host"):
        raise StoreError(
            f"{results.source} is a run in image {results.image.ref or target} that records no image digest, "
            "so it cannot be bound to what it tested",
            "pass --image-digest sha256:... (the digest the image was pulled by), or run the image with "
            "PYTORCH_CUDA_IMAGE_DIGEST set",
        )
    if not torch_text or not cuda_text:
        raise StoreError(
            f"{results.source} is a bare-host run whose environment names no torch or CUDA version "
            f"(torch {torch_text!r}, CUDA {cuda_text!r}), the key of a bare host",
            "ingest a results file of a complete run (its environment section lists torch and cuda)",
        )
    key = f"bare-torch-{_slug(torch_text)}-cuda-{_slug(cuda_text)}"
    return RunSubject("bare", key, f"bare host, torch {torch_text}, CUDA {cuda_text}", None, torch_text, cuda_text)
