"""The `release keygen|sign|verify` steps of the command line (pytorch_cuda/cli/releasing.py parses them into the
typed requests here): each returns the lines to print and the same as JSON."""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.labels import given_source_date_epoch
from pytorch_cuda.oci.registry_client import RegistryClient, open_image, reference
from pytorch_cuda.release import keys, release_index
from pytorch_cuda.release.base_check import check_built_on_base, pinned_digest
from pytorch_cuda.release.build_inputs import committed_inputs
from pytorch_cuda.release.builder_proof import UNPROVEN
from pytorch_cuda.release.index_client import IndexFailureError, cache_dir, verified_index
from pytorch_cuda.release.index_floor import Floor, floor_path, write_floor
from pytorch_cuda.release.release_index import IndexSigners
from pytorch_cuda.release.release_policy import load_policy
from pytorch_cuda.release.signing import IndexNotTrustedError, IndexPlan, image_labels, refresh_index, sign_image
from pytorch_cuda.release.statements import BuildRun, Source
from pytorch_cuda.release.trusted_root import (
    ROOT_LIFETIME,
    RootExpiringError,
    days_left,
    make_root,
    next_root,
    replace_root,
    write_root,
)
from pytorch_cuda.release.verify import verify_image

if TYPE_CHECKING:
    from securesystemslib.signer import Signer

    from pytorch_cuda.release.keyless_builder import ProvenBuilder

Outcome = tuple[list[str], dict[str, object]]


@dataclass(frozen=True)
class SignRequest:
    """`release sign`: the image, the keys, what the provenance records and the tags to bind in the index."""

    image: str
    key: str  # a private key file or a KMS/HSM signer URI
    public_key: Path
    variant: str
    source_ref: str
    commit: str | None  # None: the image's revision label
    source_repository: str | None  # None: the image's source label
    workflow: str
    builder_id: str
    invocation_id: str  # "": the builder id and the time
    tags: tuple[str, ...]
    timestamp: tuple[str, Path] | None  # the timestamp key and its public key; None: the release key signs it too
    index_lifetime: int  # seconds
    policy: Path
    require_pinned_base: bool
    matrix: Path


@dataclass(frozen=True)
class RefreshRequest:
    """`release refresh-index`: re-sign the release index of ``repository`` (None: the policy's) as it is."""

    repository: str | None
    key: str
    public_key: Path
    index_lifetime: int  # seconds
    policy: Path


@dataclass(frozen=True)
class RotateRootRequest:
    """`release rotate-root`: the current root's key, and what root v N+1 changes (None: kept)."""

    root_key: str
    root_public_key: Path
    new_root: tuple[str, Path] | None  # a new root key and its public key, where the root key changes
    public_key: Path | None
    timestamp_public_key: Path | None
    policy: Path


@dataclass(frozen=True)
class InitRootRequest:
    """`release init-root`: the offline root key, the online keys it trusts and where the root goes."""

    root_key: str
    root_public_key: Path
    public_key: Path
    timestamp_public_key: Path | None  # None: the release key
    out: Path


def keygen(key_path: Path, public_path: Path) -> Outcome:
    key = keys.generate(key_path, public_path)
    lines = [f"wrote {key_path} (private, encrypted, mode 600) and {public_path}; key id {key.keyid}"]
    return lines, {"keyid": key.keyid, "key": str(key_path), "public_key": str(public_path)}


def _source(request: SignRequest) -> Source:
    """The source repository and commit: the flags, else the image's OCI labels; refused when neither says."""
    labels: dict[str, str] = {}
    if request.commit is None or request.source_repository is None:
        client, image = open_image(request.image)
        labels = image_labels(client, image.raw, reference(request.image).repository)
    commit = request.commit or labels.get("org.opencontainers.image.revision")
    repository = request.source_repository or labels.get("org.opencontainers.image.source")
    if not commit or not repository:
        raise UserError(
            cause=f"{request.image} has no org.opencontainers.image.revision/source label, and no --commit or "
            "--source-repository was given",
            fix="pass --commit SHA and --source-repository https://github.com/OWNER/REPO (the workflow passes "
            "$GITHUB_SHA and the repository URL)",
        )
    return Source(repository, request.source_ref, commit)


def check_pinned_base(matrix_path: Path) -> str:
    """The pinned base's digest; refused (exit 2) when matrix.yaml's base carries no `digest:`."""
    return pinned_digest(matrix_path)[1]


def sign(request: SignRequest, sbom: dict[str, object], materials: dict[str, str]) -> Outcome:
    inputs = committed_inputs(request.matrix.parent, request.variant, strict=True)  # the locks, recorded
    if request.require_pinned_base:
        base = check_built_on_base(request.matrix, request.image)
        materials = {**materials, base.uri: base.config}  # recorded in the provenance
    if request.index_lifetime <= 0:
        raise UserError(cause=f"--index-lifetime {request.index_lifetime} is not positive", fix="give seconds, > 0")
    policy = load_policy(request.policy)
    signer = keys.signer(request.key, request.public_key)
    now = datetime.now(UTC)
    run = BuildRun(
        builder_id=request.builder_id,
        invocation_id=request.invocation_id or f"{request.builder_id}#{now:%Y-%m-%dT%H:%M:%SZ}",
        source=_source(request),
        variant=request.variant,
        workflow=request.workflow,
        finished_on=now,
        materials=materials,
        locks={path: digest for path, digest in inputs.locks.items() if digest is not None},
        # $SOURCE_DATE_EPOCH: the creation time of a build without git; else a rebuild needs only the commit
        source_date_epoch=given_source_date_epoch(os.environ),
    )
    plan = IndexPlan(policy.policy.index_tag, policy.trusted_root(), timedelta(seconds=request.index_lifetime))
    timestamp = _timestamp_signer(request)
    digest, attached = sign_image(request.image, signer, sbom, run, tags=request.tags, index=plan, timestamp=timestamp)
    lines = [f"signed {request.image} ({digest})"] + [f"  {a.kind}: {a.ref} {a.digest}" for a in attached]
    return lines, {"image": request.image, "digest": digest, "attached": [asdict(a) for a in attached]}


def refresh(request: RefreshRequest) -> Outcome:
    if request.index_lifetime <= 0:
        raise UserError(cause=f"--index-lifetime {request.index_lifetime} is not positive", fix="give seconds, > 0")
    policy = load_policy(request.policy)
    repository = request.repository or policy.policy.repository
    signer = keys.signer(request.key, request.public_key)
    plan = IndexPlan(policy.policy.index_tag, policy.trusted_root(), timedelta(seconds=request.index_lifetime))
    done = refresh_index(repository, IndexSigners(signer), plan)
    expires = datetime.now(UTC) + timedelta(seconds=request.index_lifetime)
    line = f"re-signed {done.ref} ({done.digest}); valid until about {expires:%Y-%m-%dT%H:%M:%SZ}"
    return [line], {"index": done.ref, "digest": done.digest, "expires": f"{expires:%Y-%m-%dT%H:%M:%SZ}"}


def recover(request: RefreshRequest) -> Outcome:
    """Revive an expired index that is the committed floor's, with a fresh timestamp (index_recovery.py)."""
    from pytorch_cuda.release.index_recovery import recover_index

    if request.index_lifetime <= 0:
        raise UserError(cause=f"--index-lifetime {request.index_lifetime} is not positive", fix="give seconds, > 0")
    policy = load_policy(request.policy)
    repository = request.repository or policy.policy.repository
    plan = IndexPlan(policy.policy.index_tag, policy.trusted_root(), timedelta(seconds=request.index_lifetime))
    done = recover_index(repository, keys.signer(request.key, request.public_key), plan)
    expires = f"{done.expires:%Y-%m-%dT%H:%M:%SZ}"
    line = (f"recovered {done.ref} ({done.digest}): targets v{done.targets_version} (the committed floor's), "
            f"timestamp v{done.timestamp_version} valid until {expires}")  # fmt: skip
    return [line], {"index": done.ref, "digest": done.digest, "targets_version": done.targets_version,
                    "timestamp_version": done.timestamp_version, "expires": expires}  # fmt: skip


def _timestamp_signer(request: SignRequest) -> Signer | None:
    """The timestamp key of `sign --tag` (the split setup); None: the release key signs the timestamp too."""
    if request.timestamp is None:
        return None
    return keys.signer(*request.timestamp)


def rotate_root(request: RotateRootRequest) -> Outcome:
    """Sign root v N+1 with the current root's offline key (and the new one's, where it changes)."""
    current = load_policy(request.policy).trusted_root()
    signers = [keys.signer(request.root_key, request.root_public_key)]
    new_root_key = None
    if request.new_root is not None:
        signers.append(keys.signer(*request.new_root))
        new_root_key = signers[-1].public_key
    online = keys.public_key(request.public_key) if request.public_key else None
    timestamp = keys.public_key(request.timestamp_public_key) if request.timestamp_public_key else None
    now = datetime.now(UTC)
    data = next_root(current, signers, now, new_root_key=new_root_key, online=online, timestamp=timestamp)
    replace_root(current.path, data)
    version = current.version + 1
    line = (f"wrote {current.path}: root v{version} (signed by v{current.version}'s root key), expires "
            f"{now + ROOT_LIFETIME:%Y-%m-%d}; commit it: the next sign or refresh-index publishes it as "
            f"{version}.root.json")  # fmt: skip
    return [line], {"root": str(current.path), "version": version}


def root_status(policy: Path, warn_days: int) -> Outcome:
    """Days until the committed root expires; exit 1 (RootExpiringError) within ``warn_days`` (--warn-days)."""
    root = load_policy(policy).trusted_root()
    left = days_left(root, datetime.now(UTC))
    expires = f"{root.metadata.signed.expires:%Y-%m-%dT%H:%M:%SZ}"
    if left < warn_days:
        raise RootExpiringError(
            cause=f"the release index's root of trust {root.path.name} v{root.version} expires {expires} "
            f"({left:.0f} days left, fewer than {warn_days}): after that no release verifies",
            fix="sign the next root with the offline root key (`build.py release rotate-root --root-key ... "
            "--root-public-key keys/release-root-key.pub`), commit it, and run refresh-index (docs/release.md)",
        )
    line = f"{root.path.name} v{root.version} expires {expires} ({left:.0f} days left)"
    return [line], {"root": str(root.path), "version": root.version, "expires": expires, "days_left": int(left)}


def record_floor(policy_path: Path) -> Outcome:
    """Raise the committed rollback floor to the index the registry serves, once it verifies here."""
    policy = load_policy(policy_path)
    repository = policy.policy.repository
    root = policy.trusted_root()
    client = RegistryClient.for_ref(reference(f"{repository}:{policy.policy.index_tag}"))
    files = release_index.fetch(client, repository, policy.policy.index_tag).files
    try:
        index = verified_index(files, root, repository, cache_dir(repository))
    except IndexFailureError as failure:
        reason = failure.reason
        raise IndexNotTrustedError(
            cause=f"record-floor refused the release index: {reason.field}: expected {reason.expected}, found "
            f"{reason.found}",
            fix=failure.fix or "restore the newest index the release workflow wrote, then record again",
        ) from failure
    raw = index.raw["targets.json"]
    floor = Floor(repository, index.targets.signed.version, index.snapshot.signed.version,
                  hashlib.sha256(raw).hexdigest())  # fmt: skip
    write_floor(floor_path(root.path), floor)
    line = (f"wrote {floor_path(root.path)}: targets v{floor.targets_version}, snapshot v{floor.snapshot_version}; "
            "commit it: from then on every checkout refuses an older index")  # fmt: skip
    return [line], asdict(floor)


def _proof(keyless: ProvenBuilder | None) -> str:
    if keyless is None:
        return UNPROVEN
    return (
        f"proven by GitHub's keyless attestation: {keyless.signer}, run {keyless.run}, Rekor entry {keyless.log_index}"
    )


def verify(image: str, policy: Path) -> Outcome:
    v = verify_image(image, load_policy(policy))
    b = v.built
    lines = [
        f"verified {v.image} ({v.digest}) against {policy.name}:",
        f"  cosign signature by key {v.keyid[:16]}; SBOM ({v.sbom_components} component"
        f"{'' if v.sbom_components == 1 else 's'}) and SLSA provenance attested",
        f"  built by {b.builder_id} from {b.source_ref} at {b.commit}",
        f"  {_proof(b.keyless)}",
        f"  {b.variant} built on {b.base} from the {b.locks} locks this checkout commits",
        f"  release index v{v.index_version}: {', '.join(v.tags)} -> this digest",
        f"pull {v.pull}",
    ]
    found = {key: value for key, value in asdict(v).items() if key != "built"}
    return lines, {**found, **asdict(b), "pull": v.pull}


def init_root(request: InitRootRequest) -> Outcome:
    """Write the committed root of trust, signed by the (offline) root key."""
    root_signer = keys.signer(request.root_key, request.root_public_key)
    online = keys.public_key(request.public_key)
    timestamp = keys.public_key(request.timestamp_public_key) if request.timestamp_public_key else online
    write_root(request.out, make_root(root_signer, online, timestamp, datetime.now(UTC)))
    line = (f"wrote {request.out}: root v1, root key {root_signer.public_key.keyid[:16]}, targets and snapshot key "
            f"{online.keyid[:16]}, timestamp key {timestamp.keyid[:16]}; commit it")  # fmt: skip
    return [line], {"root": str(request.out), "version": 1, "targets": online.keyid, "timestamp": timestamp.keyid}
