"""The release policy (release-policy.yaml at the repository root, committed): what `release verify` requires of
every image, with no flag needed. A malformed policy is bad input (exit 2), named by key."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from securesystemslib.signer import SSlibKey

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.strict_yaml import load_unique
from pytorch_cuda.release.keys import public_key
from pytorch_cuda.release.trusted_root import TrustedRoot, load_root

POLICY_FILE = "release-policy.yaml"
POLICY_SCHEMA = 1
Uri = Annotated[str, Field(min_length=1, pattern=r"^[a-z][a-z0-9+.-]*://\S+$")]


class PolicyError(UserError):
    """release-policy.yaml is missing, malformed, or names a key that cannot be read. Exit status 2."""


class KeylessBuilder(BaseModel):
    """The builder, proven without a key anyone holds: the Sigstore bundle (SLSA provenance) that GitHub's
    actions/attest-build-provenance made in `signer_workflow`, verified offline against `trusted_root`. Its
    certificate must also name the policy's `source_repository`, `workflow` and a ref matching `ref_pattern`
    (pytorch_cuda/release/keyless_builder.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # OWNER/REPO/PATH of the workflow whose OIDC token got the certificate (its SAN, up to `@ref`): as
    # `gh attestation verify --signer-workflow` reads it
    signer_workflow: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/\.github/workflows/[^@\s]+$")]
    issuer: Uri  # the OIDC issuer the certificate names (GitHub Actions: https://token.actions.githubusercontent.com)
    trusted_root: Annotated[str, Field(min_length=1)]  # Sigstore's trusted root, committed (relative to the policy)


class ReleasePolicy(BaseModel):
    """release-policy.yaml: every field is required; `verify` checks each against what was signed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: int = Field(alias="schema")
    repository: Annotated[str, Field(min_length=3, pattern=r"^[a-z0-9.:-]+(/[a-z0-9._-]+)+$")]
    builder_id: Uri
    source_repository: Uri
    ref_pattern: Annotated[str, Field(min_length=1)]
    workflow: Annotated[str, Field(min_length=1)]
    keys: Annotated[list[str], Field(min_length=1)]
    root: Annotated[str, Field(min_length=1)]  # the release index's TUF root, committed (relative to the policy)
    index_tag: Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")] = "release-index"
    keyless_builder: KeylessBuilder | None  # required; null: verify says the builder is unproven

    def ref_allowed(self, ref: str) -> bool:
        return fnmatch.fnmatchcase(ref, self.ref_pattern)


class LoadedPolicy:
    """The policy and the public keys it names (paths relative to the policy file)."""

    def __init__(self, path: Path, policy: ReleasePolicy, keys: tuple[SSlibKey, ...]) -> None:
        self.path = path
        self.policy = policy
        self.keys = keys

    @property
    def keyids(self) -> list[str]:
        return [key.keyid for key in self.keys]

    def trusted_root(self) -> TrustedRoot:
        """The committed root of trust of the release index (read when the index is needed)."""
        return load_root(self.path.parent / self.policy.root)


def load_policy(path: Path) -> LoadedPolicy:
    try:
        data = load_unique(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PolicyError(
            cause=f"the release policy {path} does not exist",
            fix=f"run from a checkout of the repository (it commits {POLICY_FILE}), or pass --policy PATH",
        ) from None
    except (OSError, yaml.YAMLError) as exc:
        raise PolicyError(cause=f"cannot read the release policy {path} ({exc})", fix="restore it from git") from exc
    try:
        policy = ReleasePolicy.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise PolicyError(
            cause=f"at key {where!r} of {path}: {first['msg']} (found {first.get('input')!r})",
            fix="correct that key; docs/release.md describes every key of the policy",
        ) from exc
    if policy.schema_ != POLICY_SCHEMA:
        raise PolicyError(
            cause=f"at key 'schema' of {path} the value {policy.schema_} is not supported (allowed: 1)",
            fix="use a build.py as new as the policy",
        )
    keys = tuple(public_key(path.parent / name) for name in policy.keys)
    return LoadedPolicy(path, policy, keys)
