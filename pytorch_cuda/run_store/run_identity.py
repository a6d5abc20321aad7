"""What a stored run is, for its history: the key it is judged under (variant x GPU model x driver branch, which
stays the same across nights while the image digest changes), what it ran on (digest, versions, driver, the GPU
and host hashed), and why it ran (the nightly, a fault or a control; a partial nightly is a nightly, marked)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

from pytorch_cuda_contract.results_file import ConformanceResults

PURPOSES: Final = ("nightly", "fault", "control")
BARE: Final = "bare host"
CARRIED: Final = "stack carried to a bare host,"
_SELECTING: Final = ("-k", "--deselect", "--lf", "--last-failed", "--sw", "--stepwise")


@dataclass(frozen=True, order=True)
class HistoryKey:
    """Runs under one key form one history: a nightly's new digest joins the same series."""

    # cu128-runtime; "cu128-runtime stack carried to a bare host, torch 2.9.1+cu128"; "bare host torch 2.11.0+cu130"
    variant: str
    gpu: str  # the GPU model (every GPU of the run, joined)
    driver_branch: str  # the driver's major version ("580"), "unknown" when not read

    @property
    def text(self) -> str:
        return f"{self.variant} on {self.gpu}, driver {self.driver_branch}"

    @property
    def slug(self) -> str:
        parts = (self.variant, self.gpu, f"driver {self.driver_branch}")
        return "--".join(re.sub(r"[^a-z0-9.]+", "-", part.lower()).strip("-") for part in parts)


@dataclass(frozen=True)
class RunIdentity:
    """Everything a run page shows about where a run ran; GPU UUIDs and host names only as sha256 prefixes."""

    digest: str | None
    torch: str | None
    cuda: str | None
    driver: str | None
    gpu_uuids: tuple[str, ...]  # sha256[:16] of each GPU's UUID
    host: str | None  # sha256[:16] of the host name the run recorded
    host_source: str | None  # PYTORCH_CUDA_HOST or hostname
    suite_digest: str | None


def _hashed(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def variant_name(results: ConformanceResults) -> str:
    """The image variant (manifest target and flavour); for the image's stack carried to a bare host, that variant
    with the stack's torch (a history of its own: the host's Python and loader are not the image's); else the bare
    host's torch version."""
    carried = results.stack.carried
    if carried is not None:
        torch = results.environment.get("torch") or carried.packages.get("torch") or "?"
        return f"{carried.variant} {CARRIED} torch {torch}"
    content = results.manifest_content
    if content.get("target") and content["target"] != "bare-host":  # a host's own expectations file: bare
        return f"{content['target']}-{content.get('flavour') or 'runtime'}"
    return f"{BARE} torch {results.environment.get('torch') or '?'}"


def driver_branch(driver: object) -> str:
    match = re.match(r"\s*(\d+)\.", str(driver or ""))
    return match.group(1) if match else "unknown"


def history_key(results: ConformanceResults) -> HistoryKey:
    gpu = " + ".join(sorted({g.name for g in results.gpus})) or "no GPU"
    driver = results.environment.get("driver") or next((g.driver for g in results.gpus if g.driver), None)
    return HistoryKey(variant_name(results), gpu, driver_branch(driver))


def run_identity(results: ConformanceResults) -> RunIdentity:
    environment = results.environment
    host = environment.get("host")
    host_doc = host if isinstance(host, dict) else {}
    return RunIdentity(
        digest=results.image.digest,
        torch=str(environment.get("torch")) if environment.get("torch") else None,
        cuda=str(environment.get("cuda")) if environment.get("cuda") else None,
        driver=str(environment.get("driver")) if environment.get("driver") else None,
        gpu_uuids=tuple(_hashed(g.uuid) for g in results.gpus if g.uuid),
        host=str(host_doc["sha256"]) if host_doc.get("sha256") else None,
        host_source=str(host_doc["source"]) if host_doc.get("source") else None,
        suite_digest=results.suite_digest,
    )


def machine_of(identity: RunIdentity) -> str:
    """Where a run ran, for noise and confirmation: the host when recorded, else the first GPU (a lease of a
    bare host is one physical GPU), else unknown."""
    return identity.host or (identity.gpu_uuids[0] if identity.gpu_uuids else "unknown")


def is_partial(results: ConformanceResults) -> bool:
    """A selection (-k, deselected tests, tests not run): its numbers are real and judged; the run is marked."""
    deselected = results.counts().get("not_run", 0) > 0 or bool(results.totals.get("not_run"))
    return deselected or any(arg in _SELECTING or arg.startswith(("-k", "--deselect=")) for arg in results.argv)


def purpose_of(results: ConformanceResults, fault: str | None, control: str | None) -> str:
    if fault:
        return "fault"
    if control:
        return "control"
    return "nightly"
