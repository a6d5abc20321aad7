"""Promote by digest: copy the tested manifest, byte for byte, to each release tag inside the registry.

`skopeo copy --all --preserve-digests` copies within the registry (no pull, no re-push through an engine that
could write the manifest anew); then each tag's manifest is read back and must be the tested bytes, or the
promotion fails naming both digests.

Sign before promote: no tag moves unless the tested digest is already signed and attested as `verify` requires
(steps 1-3 of verify.py) and the release index binds every tag to it (step 4): an unsigned or unbound candidate,
or a missing key upstream, leaves every tag where it was.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError
from pytorch_cuda.oci.registry_client import RegistryAccessError, RegistryClient, is_loopback, reference
from pytorch_cuda.references import registry_host
from pytorch_cuda.release import release_index
from pytorch_cuda.release.failures import VerificationFailedError
from pytorch_cuda.release.index_client import IndexFailureError, trusted_targets
from pytorch_cuda.release.release_policy import LoadedPolicy
from pytorch_cuda.release.verify import signed

SkopeoRunner = Callable[[list[str]], subprocess.CompletedProcess[str]]


class PromotionMismatchError(UserError):
    """A release tag does not serve the tested manifest's bytes. Exit status 1."""

    exit_status = EXIT_CHECKS_FAILED


@dataclass(frozen=True)
class Promoted:
    ref: str  # repository:tag
    digest: str


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def skopeo_copy_argv(source: str, destination: str) -> list[str]:
    argv = ["skopeo", "copy", "--all", "--preserve-digests", "--retry-times", "3"]
    for flag, ref in (("--src-tls-verify=false", source), ("--dest-tls-verify=false", destination)):
        host = registry_host(reference(ref).repository)
        if host is not None and is_loopback(host):
            argv.append(flag)
    return [*argv, f"docker://{source}", f"docker://{destination}"]


class UnsignedCandidateError(UserError):
    """The tested digest is not signed and attested yet. Exit status 1; no tag moved."""

    exit_status = EXIT_CHECKS_FAILED


def require_signed(tested: str, policy: LoadedPolicy) -> None:
    try:
        signed(tested, policy)
    except VerificationFailedError as failure:
        reason = failure.reason
        raise UnsignedCandidateError(
            cause=f"{tested} is not signed and attested as {policy.path.name} requires, so no tag was moved: "
            f"{reason.field}: expected {reason.expected}, found {reason.found}",
            fix="sign the tested digest first (`build.py release sign REPO@sha256:... --key K ...`; release.yml "
            "signs before it promotes) and, where the policy names a keyless_builder, attest it in that workflow "
            "(actions/attest-build-provenance with push-to-registry: true), then promote",
        ) from failure


def require_bound(tested: str, tags: Sequence[str], policy: LoadedPolicy) -> None:
    """Every tag is bound to the tested digest in the release index (read through the TUF client) before any tag
    moves: a tag never points at an image the index does not bind, even for a moment."""
    source = reference(tested)
    client = RegistryClient.for_ref(source)
    files = release_index.fetch(client, source.repository, policy.policy.index_tag).files
    try:
        _, bound = trusted_targets(files, policy)
    except IndexFailureError as failure:
        reason = failure.reason
        raise UnsignedCandidateError(
            cause=f"the release index refused ({reason.field}: expected {reason.expected}, found {reason.found}), "
            "so no tag was moved",
            fix=failure.fix or "restore the newest release index, then sign --tag and promote again",
        ) from failure
    unbound = [tag for tag in tags if bound.get(tag) != source.digest]
    if unbound:
        found = ", ".join(f"{tag} to {bound.get(tag, 'nothing')}" for tag in unbound)
        raise UnsignedCandidateError(
            cause=f"the release index binds {found}, not to the tested {source.digest}, so no tag was moved",
            fix="bind the tags first (`build.py release sign REPO@sha256:... --tag T ...`: release.yml signs and "
            "binds before it promotes), then promote",
        )


def promote(
    tested: str, tags: Sequence[str], policy: LoadedPolicy, *, repository: str | None = None, run: SkopeoRunner = _run
) -> list[Promoted]:
    """Point `repository:tag` (default: the tested image's repository) at the tested digest, for each tag, once
    the tested digest is signed and attested."""
    source = reference(tested)
    if source.digest is None:
        raise RegistryAccessError(
            cause=f"{tested} is not pinned by digest: a tag can move between the test and the release",
            fix="give the digest the tests ran on, REPOSITORY@sha256:...",
        )
    require_signed(tested, policy)
    require_bound(tested, tags, policy)
    if shutil.which("skopeo") is None and run is _run:
        raise RegistryAccessError(
            cause="skopeo is not installed; it copies the tested manifest inside the registry",
            fix="install it: `sudo apt-get install skopeo` (scripts/setup-registry.sh does)",
        )
    client = RegistryClient.for_ref(source)
    original = client.manifest(tested)
    if original is None or original.digest != source.digest:
        raise RegistryAccessError(
            cause=f"the registry has no manifest {source.digest} in {source.repository}",
            fix="promote the digest the candidate push printed (build.json's `digests`)",
        )
    target = reference(f"{repository or source.repository}:release")
    out_client = RegistryClient.for_ref(target)
    promoted: list[Promoted] = []
    for tag in tags:
        destination = f"{target.repository}:{tag}"
        result = run(skopeo_copy_argv(str(source.pinned), destination))
        if result.returncode != 0:
            tail = " / ".join((result.stderr or result.stdout).strip().splitlines()[-3:])
            raise RegistryAccessError(
                cause=f"skopeo could not copy {source.pinned} to {destination} (exit {result.returncode}): {tail}",
                fix="check the login (skopeo reads docker login's credentials) and push rights; run again: "
                "the tags already promoted point at the tested digest",
            )
        served = out_client.manifest(destination)
        if served is None or served.raw != original.raw:
            got = served.digest if served else "nothing"
            raise PromotionMismatchError(
                cause=f"{destination} serves {got}, not the tested manifest {original.digest} (the bytes differ); "
                f"promoted so far: {', '.join(p.ref for p in promoted) or 'none'}",
                fix="do not release it: find what rewrote the manifest (a registry that converts manifests, a "
                "proxy), then promote again by digest",
            )
        promoted.append(Promoted(destination, served.digest))
    return promoted
