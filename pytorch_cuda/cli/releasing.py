"""`build.py release ...`: keygen, init-root, rotate-root, root-status, sign, promote, verify, refresh-index,
recover-index, record-floor, pin-base (docs/release.md). Exit status: 0 done or verified; 1 a promoted tag serves
other bytes, an unsigned or unbound candidate, an index refused (expired, rolled back, foreign) or lost to other
writers, a recovery of another index than the committed floor's, a root expiring within --warn-days, or
verification failed; 2 bad input or environment."""

from __future__ import annotations

import argparse
import json
import socket
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from pytorch_cuda.cli.options import CommandParser, Session, SharedOptions, examples
from pytorch_cuda.errors import UserError

if TYPE_CHECKING:  # the lines to print, and the same as JSON; release loads only for `release` (build.py starts fast)
    from pytorch_cuda.release.commands import Outcome


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    release = verbs.add_parser(
        "release",
        help="promote, sign and verify a release; pin the base (see `release --help`)",
        description=__doc__,
        epilog=examples(
            "release keygen --key release.key --public-key release.pub",
            "release promote 127.0.0.1:5000/ci/pytorch-cuda@sha256:DIGEST --tag v2.9.1",
            "release verify ghcr.io/pytorch-cuda/pytorch-cuda:v2.9",
            "release pin-base --json",
        ),
    )
    release.set_defaults(run=release_verb)
    subs: argparse._SubParsersAction[argparse.ArgumentParser] = release.add_subparsers(
        dest="release_verb", required=True, metavar="STEP", parser_class=CommandParser
    )
    common = [shared.common]
    keygen = subs.add_parser(
        "keygen", parents=common, help="write a new ECDSA P-256 release key pair (private key encrypted, mode 600)"
    )
    keygen.add_argument("--key", type=Path, required=True, help="private key to write (PEM, PKCS#8, encrypted)")
    keygen.add_argument("--public-key", type=Path, required=True, help="public key to write (PEM)")
    prom = subs.add_parser(
        "promote", parents=common, help="copy the tested manifest to each tag inside the registry, byte-exact"
    )
    prom.add_argument("tested", metavar="REPOSITORY@sha256:DIGEST")
    prom.add_argument("--tag", action="append", required=True, dest="tags", help="a release tag (repeat)")
    prom.add_argument("--repository", help="where the tags go (default: the tested image's repository)")
    prom.add_argument("--policy", type=Path, help="the release policy (default: the repository's release-policy.yaml)")
    root = subs.add_parser(
        "init-root", parents=common, help="write the release index's root of trust, signed by the offline root key"
    )
    root.add_argument("--root-key", required=True, help="the root's private key file (or KMS/HSM URI); offline")
    root.add_argument("--root-public-key", type=Path, required=True, help="its public key (PEM)")
    root.add_argument("--public-key", type=Path, help="the release key: targets, snapshot (default: keys/release.pub)")
    root.add_argument("--timestamp-public-key", type=Path, help="the daily refresh's key (default: the release key)")
    root.add_argument("--out", type=Path, help="where to write it (default: the repository's keys/release-root.json)")
    sign = subs.add_parser(
        "sign", parents=common, help="cosign signature and attestations; bind the tags in the signed release index"
    )
    sign.add_argument("image", metavar="IMAGE[@sha256:DIGEST]")
    sign.add_argument("--key", required=True, help="the private key file (passphrase in $RELEASE_KEY_PASSPHRASE) "
                      "or a KMS/HSM signer URI (awskms:, gcpkms:, azurekms:, hsm:, hv:)")  # fmt: skip
    sign.add_argument("--public-key", type=Path, help="its public key (default: the repository's keys/release.pub)")
    sign.add_argument("--sbom", type=Path, required=True, help="the image's CycloneDX SBOM (JSON)")
    sign.add_argument("--variant", required=True, help="matrix.yaml's variant the image is (e.g. cu128-runtime)")
    sign.add_argument("--source-ref", required=True, help="the git ref released (e.g. refs/tags/v2.9.1)")
    sign.add_argument("--commit", help="the source commit (default: the image's revision label)")
    sign.add_argument("--source-repository", help="https://github.com/OWNER/REPO (default: the image's source label)")
    sign.add_argument("--workflow", default=".github/workflows/release.yml", help="the workflow that ran")
    sign.add_argument("--builder-id", default=f"local://{socket.gethostname()}", help="who built it (a URI)")
    sign.add_argument("--invocation-id", default="", help="the build run (e.g. the workflow run's URL)")
    sign.add_argument("--material", action="append", default=[], metavar="URI=sha256:DIGEST", help="an input")
    sign.add_argument("--tag", action="append", default=[], dest="tags", help="a tag to bind in the index (repeat)")
    sign.add_argument("--timestamp-key", help="the timestamp key (file or URI) where the root gives the timestamp "
                      "role its own key (default: --key signs the timestamp too)")  # fmt: skip
    sign.add_argument("--timestamp-public-key", type=Path, help="its public key (default: keys/release-timestamp.pub)")
    sign.add_argument("--index-lifetime", type=int, default=2 * 86400, metavar="SECONDS",
                      help="how long the index's timestamp stays valid unless re-signed (default: 2 days)")  # fmt: skip
    sign.add_argument("--policy", type=Path, help="the release policy (default: the repository's release-policy.yaml)")
    sign.add_argument(
        "--require-pinned-base", action="store_true", help="refuse (exit 2) unless matrix.yaml's base has a digest:"
    )
    fresh = subs.add_parser(
        "refresh-index", parents=common, help="re-sign the release index as it is, before it expires"
    )
    fresh.add_argument("--repository", help="the release repository (default: release-policy.yaml's)")
    fresh.add_argument("--key", required=True, help="the private key file or a KMS/HSM signer URI, as for sign")
    fresh.add_argument("--public-key", type=Path, help="its public key (default: the repository's keys/release.pub)")
    fresh.add_argument("--index-lifetime", type=int, default=2 * 86400, metavar="SECONDS",
                       help="the new timestamp's lifetime (default: 2 days; release.yml re-signs daily)")  # fmt: skip
    fresh.add_argument("--policy", type=Path, help="the release policy (default: the repository's release-policy.yaml)")
    recover = subs.add_parser(
        "recover-index", parents=common,
        help="revive an EXPIRED index that is the committed floor's, with a fresh timestamp (the timestamp key)",
    )  # fmt: skip
    recover.add_argument("--repository", help="the release repository (default: release-policy.yaml's)")
    recover.add_argument("--key", required=True, help="the timestamp key: a private key file or a KMS/HSM signer URI")
    recover.add_argument("--public-key", type=Path, help="its public key (default: keys/release-timestamp.pub)")
    recover.add_argument("--index-lifetime", type=int, default=2 * 86400, metavar="SECONDS",
                         help="the new timestamp's lifetime (default: 2 days)")  # fmt: skip
    recover.add_argument("--policy", type=Path, help="the release policy (default: the repository's)")
    rotate = subs.add_parser(
        "rotate-root", parents=common, help="sign root v N+1 with the current root's offline key (rotate or renew)"
    )
    rotate.add_argument("--root-key", required=True, help="the current root's private key file (or KMS/HSM URI)")
    rotate.add_argument("--root-public-key", type=Path, required=True, help="its public key (PEM)")
    rotate.add_argument("--new-root-key", help="a new root key (file or URI), where the root key changes")
    rotate.add_argument("--new-root-public-key", type=Path, help="its public key (PEM)")
    rotate.add_argument("--public-key", type=Path, help="a new release key for targets and snapshot (default: kept)")
    rotate.add_argument("--timestamp-public-key", type=Path, help="a new timestamp key (default: kept)")
    rotate.add_argument("--policy", type=Path, help="the release policy (default: the repository's)")
    status = subs.add_parser("root-status", parents=common, help="days until the committed root expires")
    status.add_argument("--warn-days", type=int, default=30, help="exit 1 when fewer days are left (default: 30)")
    status.add_argument("--policy", type=Path, help="the release policy (default: the repository's)")
    floor = subs.add_parser(
        "record-floor", parents=common, help="raise the committed rollback floor to the verified index (commit it)"
    )
    floor.add_argument("--policy", type=Path, help="the release policy (default: the repository's)")
    ver = subs.add_parser(
        "verify", parents=common, help="verify an image against release-policy.yaml: signature, attestations, index"
    )
    ver.add_argument("image", metavar="IMAGE[:TAG|@sha256:DIGEST]")
    ver.add_argument("--policy", type=Path, help="the release policy (default: the repository's release-policy.yaml)")
    pin = subs.add_parser("pin-base", parents=common, help="pin matrix.yaml's base to the base image here")
    pin.add_argument("--matrix", type=Path, help="the matrix file to edit (default: the repository's matrix.yaml)")
    pin.add_argument("--base", help="which base (default: the matrix's default_base)")


def _materials(items: Sequence[str]) -> dict[str, str]:
    pairs = dict(item.rpartition("=")[::2] for item in items)
    bad = [uri for uri, digest in pairs.items() if not uri or not digest.startswith("sha256:")]
    if bad:
        raise UserError(
            cause=f"--material {bad[0]!r} is not URI=sha256:DIGEST", fix="give each input as URI=sha256:HEX"
        )
    return pairs


def _sbom(path: Path) -> dict[str, object]:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(cause=f"cannot read the SBOM {path} ({exc})", fix="give the build's .cdx.json") from exc
    if not isinstance(document, dict):
        raise UserError(cause=f"{path} is not a JSON object", fix="give the build's CycloneDX .cdx.json")
    return document


def _given(path: Path | None, root: Callable[[], Path], *default: str) -> Path:
    """``path``, else ``default`` in the checkout (found only then: keygen runs anywhere)."""
    return root().joinpath(*default) if path is None else path


def run(args: argparse.Namespace, root: Callable[[], Path]) -> Outcome:
    """The step ``args`` names, as its typed request (a path not given: the checkout's, ``root()``)."""
    # imported here: the registry client (oras), tuf and cryptography load only for `release` (build.py starts fast)
    from pytorch_cuda.release.commands import (
        InitRootRequest,
        RefreshRequest,
        RotateRootRequest,
        SignRequest,
        init_root,
        keygen,
        record_floor,
        recover,
        refresh,
        root_status,
        rotate_root,
        sign,
        verify,
    )
    from pytorch_cuda.release.pin_command import pin_base
    from pytorch_cuda.release.promote import promote
    from pytorch_cuda.release.release_policy import load_policy

    verb = args.release_verb
    if verb == "keygen":
        return keygen(args.key, args.public_key)
    if verb == "init-root":
        return init_root(
            InitRootRequest(
                args.root_key,
                args.root_public_key,
                _given(args.public_key, root, "keys", "release.pub"),
                args.timestamp_public_key,
                _given(args.out, root, "keys", "release-root.json"),
            )
        )
    if verb == "pin-base":
        pinned = pin_base(_given(args.matrix, root, "matrix.yaml"), args.base)
        line = f"pinned base {pinned.base} ({pinned.image}): {pinned.previous or 'no pin'} -> {pinned.digest}"
        return [line, f"  {pinned.note}"], asdict(pinned)
    policy = _given(args.policy, root, "release-policy.yaml")
    if verb == "promote":
        done = promote(args.tested, args.tags, load_policy(policy), repository=args.repository)
        lines = [f"promoted {p.ref} -> {p.digest} (the tested bytes)" for p in done]
        return lines, {"tested": args.tested, "promoted": [asdict(p) for p in done]}
    if verb == "sign":
        timestamp_public_key = args.timestamp_public_key
        if args.timestamp_key and timestamp_public_key is None:
            timestamp_public_key = root() / "keys" / "release-timestamp.pub"
        request = SignRequest(
            args.image, args.key, _given(args.public_key, root, "keys", "release.pub"), args.variant, args.source_ref,
            args.commit, args.source_repository, args.workflow, args.builder_id, args.invocation_id, tuple(args.tags),
            (args.timestamp_key, timestamp_public_key) if args.timestamp_key else None, args.index_lifetime, policy,
            args.require_pinned_base, root() / "matrix.yaml",
        )  # fmt: skip
        return sign(request, _sbom(args.sbom), _materials(args.material))
    if verb == "refresh-index":
        public_key = _given(args.public_key, root, "keys", "release.pub")
        return refresh(RefreshRequest(args.repository, args.key, public_key, args.index_lifetime, policy))
    if verb == "recover-index":
        public_key = _given(args.public_key, root, "keys", "release-timestamp.pub")
        return recover(RefreshRequest(args.repository, args.key, public_key, args.index_lifetime, policy))
    if verb == "rotate-root":
        if bool(args.new_root_key) != bool(args.new_root_public_key):
            given, missing = ("--new-root-key", "--new-root-public-key")[:: 1 if args.new_root_key else -1]
            raise UserError(
                cause=f"rotate-root was given {given} without {missing}: a new root key comes as a pair",
                fix="pass both --new-root-key (the private key or URI) and --new-root-public-key (its PEM), or "
                "neither to renew the root with its current key",
            )
        new_root = (args.new_root_key, args.new_root_public_key) if args.new_root_key else None
        return rotate_root(
            RotateRootRequest(
                args.root_key, args.root_public_key, new_root, args.public_key, args.timestamp_public_key, policy
            )
        )
    if verb == "root-status":
        return root_status(policy, args.warn_days)
    if verb == "record-floor":
        return record_floor(policy)
    return verify(args.image, policy)


def release_verb(args: argparse.Namespace, session: Session) -> int:
    """`build.py release STEP`: errors are reported by the command line, as every verb's are."""
    lines, found = run(args, session.root)
    print(json.dumps(found, indent=2) if args.json else "\n".join(lines))
    return 0
