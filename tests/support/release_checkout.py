"""A release as a user meets it, for the release tests: a checkout (matrix.yaml, images/ with its locks,
templates/, release-policy.yaml, keys/release.pub, the index's root of trust keys/release-root.json made by its own
root key) whose policy names a repository of the loopback registry, whose matrix.yaml pins a base published there
(as release.yml requires), and `build.py release ...` run from inside it, as docs/release.md says, with no
--policy flag. Candidates are images on that base (tests/support/registry_images.py: no engine, no build). The
attacks' registry edits (a manifest put under another tag with its `subject` rewritten) go through the registry's
HTTP API."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
import time_machine

from pytorch_cuda.cli.main import main
from tests.support import local_registry as registry
from tests.support.integration import ROOT
from tests.support.registry_images import SOURCE, Image, push_image
from tests.support.tiny_images import unique_repository

PASSPHRASE = "correct horse battery staple"
# `python -c AHEAD SECONDS build.py ARGS`: build.py with the process's wall clock (time.time, datetime.now: what the
# release index's expiry checks read, python-tuf's among them) moved SECONDS ahead of the real one and ticking on
# (time-machine); time.monotonic, and so every timeout, stays. An index's expiry is met without waiting for it.
AHEAD = """
import datetime, runpy, sys, time_machine
ahead = datetime.timedelta(seconds=float(sys.argv.pop(1)))
time_machine.travel(datetime.datetime.now(datetime.UTC) + ahead, tick=True).start()
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


@dataclass(frozen=True)
class Checkout:
    folder: Path
    repository: str  # 127.0.0.1:5000/ci/release-test-xxxx
    cache: Path  # $XDG_CACHE_HOME: where the TUF client keeps the index versions it has seen
    base: Image | None = None  # the base matrix.yaml pins (published in base_repository), None: unpinned
    base_repository: str = ""
    timestamp_key: str | None = None  # the split setup: keys/timestamp.key holds the timestamp role alone
    ahead: int = 0  # seconds: this machine's clock, ahead of the real one (`later`)
    # True: every `build.py release` is a process of its own, as a user types it (`as_typed`); False: build.py's main()
    # in this process (the same argv, working directory, environment, clock and output; no interpreter start)
    own_process: bool = False

    def candidate(self, tag: str, revision: str, repository: str | None = None) -> str:
        """An image built on the pinned base, pushed as `repository:tag` (default: the release repository)."""
        return push_image(repository or self.repository, tag, revision, self.base).digest

    @property
    def path(self) -> str:
        return self.repository.removeprefix(f"{registry.REGISTRY_HOST}/")

    def release(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`build.py release ARGS` from inside the checkout (its release-policy.yaml is read by default)."""
        env = {"XDG_CACHE_HOME": str(self.cache), "RELEASE_KEY_PASSPHRASE": PASSPHRASE}
        if not self.own_process:
            return self._in_this_process(["release", *args], env)
        clock = ["-c", AHEAD, str(self.ahead)] if self.ahead else []
        return subprocess.run(
            [sys.executable, *clock, "build.py", "release", *args],
            capture_output=True, text=True, timeout=300, cwd=self.folder, env={**os.environ, **env},
        )  # fmt: skip

    def _in_this_process(self, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        """build.py's main(argv) as build.py calls it, here: its exit status and what it printed. The process's
        working directory, environment, clock (time-machine, as AHEAD moves it) and signal handlers are put back
        after it. About 0.5 CPU-s less than a process of its own (Python and build.py's imports starting), some 190
        times in the release tests."""
        out, err = io.StringIO(), io.StringIO()
        clock = (
            time_machine.travel(datetime.now(UTC) + timedelta(seconds=self.ahead), tick=True)
            if self.ahead
            else contextlib.nullcontext()
        )
        with _process_state(self.folder, env), clock, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv, start=self.folder.resolve())
            except SystemExit as exit:  # argparse's bad input: 2, as the process would exit
                status = exit.code if isinstance(exit.code, int) else 1
            except Exception:  # what the process would print and exit 1 on
                traceback.print_exc()
                status = 1
        return subprocess.CompletedProcess(["build.py", *argv], status, out.getvalue(), err.getvalue())

    def as_typed(self) -> Checkout:
        """The same checkout whose `build.py release` runs are processes of their own, as a user's (or another
        machine's: a release racing this process's own calls into the release code)."""
        return dataclasses.replace(self, own_process=True)

    def sign(
        self,
        image: str,
        key: str = "release",
        *tags: str,
        lifetime: int = 3600,
        pinned_base: bool = True,
        timestamp_key: str | None = "",
        expect_status: int = 0,
    ) -> subprocess.CompletedProcess[str]:
        """`release sign` as release.yml runs it (`--require-pinned-base`, unless not `pinned_base`; the split
        setup's `--timestamp-key keys/<timestamp_key>.key`)."""
        args = [
            "sign", image, "--key", str(self.folder / "keys" / f"{key}.key"),
            "--public-key", str(self.folder / "keys" / f"{key}.pub"), "--sbom", str(self.folder / "sbom.cdx.json"),
            "--variant", "cu128-runtime", "--source-ref", "refs/tags/v9.9.0",
            "--builder-id", "https://github.com/pytorch-cuda/pytorch-cuda/.github/workflows/release.yml",
            "--index-lifetime", str(lifetime), *(["--require-pinned-base"] if pinned_base else []),
        ]  # fmt: skip
        for tag in tags:
            args += ["--tag", tag]
        timestamp_key = self.timestamp_key if timestamp_key == "" else timestamp_key
        if timestamp_key is not None:
            keys = self.folder / "keys"
            args += ["--timestamp-key", str(keys / f"{timestamp_key}.key"),
                     "--timestamp-public-key", str(keys / f"{timestamp_key}.pub")]  # fmt: skip
        signed = self.release(*args)
        assert signed.returncode == expect_status, signed.stderr
        return signed

    def later(self, seconds: int) -> Checkout:
        """The same machine `seconds` later: its `build.py release` runs with the clock moved ahead (AHEAD)."""
        return dataclasses.replace(self, ahead=self.ahead + seconds)


@contextlib.contextmanager
def _process_state(folder: Path, env: dict[str, str]) -> Iterator[None]:
    """Inside `folder` with `env` set; the working directory, the environment and SIGINT's and SIGTERM's handlers
    (build.py's main sets both) as they were afterwards."""
    cwd, environ = Path.cwd(), dict(os.environ)
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    os.environ.update(env)
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(environ)
        for number, handler in handlers.items():
            if handler is not None:  # None: not set from Python
                signal.signal(number, handler)


def fresh(checkout: Checkout, tmp_path: Path, name: str) -> Checkout:
    """The same checkout on a machine with no cache: a fresh CI runner, or a first-time user."""
    return dataclasses.replace(checkout, cache=tmp_path / name)


def refresh(checkout: Checkout) -> tuple[int, str]:
    """`release refresh-index` with the split setup's timestamp key: its exit status and what it said."""
    keys_dir = checkout.folder / "keys"
    done = checkout.release("refresh-index", "--key", str(keys_dir / "timestamp.key"),
                            "--public-key", str(keys_dir / "timestamp.pub"))  # fmt: skip
    return done.returncode, folded(done.stderr) or done.stdout


def released(checkout: Checkout, revision: str, tag: str, lifetime: int = 3600) -> str:
    """A candidate built from `revision`, signed (its index entry living `lifetime` seconds) and promoted to `tag`:
    its digest."""
    digest = checkout.candidate(f"candidate-{revision[0]}", revision)
    checkout.sign(f"{checkout.repository}@{digest}", "release", tag, lifetime=lifetime)
    promoted = checkout.release("promote", f"{checkout.repository}@{digest}", "--tag", tag)
    assert promoted.returncode == 0, promoted.stderr
    return digest


def pin_base(folder: Path, published: str, config: str) -> None:
    """Pin the checkout's base: matrix.yaml's `upstream:` names `published` (REPO@sha256:...), `digest:` its
    config, as `build.py release pin-base` leaves it."""
    matrix = folder / "matrix.yaml"
    upstream = "    upstream: docker.io/library/debian:trixie-slim\n"
    assert upstream in matrix.read_text()
    matrix.write_text(matrix.read_text().replace(upstream, f"    upstream: {published}\n    digest: {config}\n", 1))


def without_keyless_builder(policy: str) -> str:
    """The policy with `keyless_builder: null`: no keyless attestation required (none can be made here)."""
    head, found, _ = policy.partition("\nkeyless_builder:\n")
    assert found, "release-policy.yaml ends with its keyless_builder block"
    return f"{head}\nkeyless_builder: null\n"


# Each role's key pair, made once per test process by `build.py release keygen` and copied into every later checkout
# (a keygen is a process start and a passphrase's scrypt: about 0.5 CPU-s, 75 of them in the release tests): role ->
# (private key, public key). The checkouts stand for repositories of one publisher with one set of keys; each test's
# keys are its checkout's copies, and a test that needs a new key makes it (the rotation's release2).
_KEY_PAIRS: dict[str, tuple[bytes, bytes]] = {}


def _key_pair(checkout: Checkout, name: str) -> None:
    """keys/NAME.key (mode 0600, as keygen writes it) and keys/NAME.pub in the checkout."""
    private, public = checkout.folder / "keys" / f"{name}.key", checkout.folder / "keys" / f"{name}.pub"
    if name not in _KEY_PAIRS:
        made = checkout.release("keygen", "--key", str(private), "--public-key", str(public))
        assert made.returncode == 0, made.stderr
        _KEY_PAIRS[name] = (private.read_bytes(), public.read_bytes())
        return
    private.touch(mode=0o600, exist_ok=False)
    private.write_bytes(_KEY_PAIRS[name][0])
    public.write_bytes(_KEY_PAIRS[name][1])


def make_checkout(
    folder: Path, repository: str, *, pinned: bool = True, keyless: bool = False, split: bool = False
) -> Checkout:
    """A checkout whose policy covers `repository`, with a release key pair and an intruder's, and (`pinned`)
    a base published in a repository of its own and pinned in matrix.yaml. Its policy requires the committed
    keyless builder (`keyless`), or names none: no test can make GitHub's keyless attestation."""
    folder.mkdir(parents=True)
    for name in ("build.py", "matrix.yaml"):  # build.py finds the repository from its own folder
        shutil.copy(ROOT / name, folder / name)
    shutil.copytree(ROOT / "images", folder / "images")  # the locks and Dockerfiles: a copy, edited by some tests
    for package in ("pytorch_cuda", "pytorch_cuda_contract", "pytorch_cuda_entry", "pytorch_cuda_sbom",
                    "conformance", "precision_check", "templates"):  # fmt: skip
        (folder / package).symlink_to(ROOT / package, target_is_directory=True)
    (folder / "keys").mkdir()
    policy = (ROOT / "release-policy.yaml").read_text().replace("ghcr.io/pytorch-cuda/pytorch-cuda", repository)
    (folder / "release-policy.yaml").write_text(policy if keyless else without_keyless_builder(policy))
    shutil.copy(ROOT / "keys" / "sigstore-trusted-root.json", folder / "keys" / "sigstore-trusted-root.json")
    (folder / "sbom.cdx.json").write_text(
        json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1, "components": [{"name": "hello"}]})
    )
    checkout = Checkout(folder, repository, folder / "cache")
    if pinned:
        registry.require_registry()
        base_repository = unique_repository()
        base = push_image(base_repository, "trixie", "0" * 40)
        pin_base(folder, base.pinned(base_repository), base.config)
        checkout = Checkout(folder, repository, folder / "cache", base, base_repository)
    if split:
        checkout = dataclasses.replace(checkout, timestamp_key="timestamp")
    keys = folder / "keys"
    for name in ("release", "intruder", "root", *(["timestamp"] if split else [])):
        _key_pair(checkout, name)
    timestamp = ["--timestamp-public-key", str(keys / "timestamp.pub")] if split else []  # docs/release.md's setup
    rooted = checkout.release("init-root", "--root-key", str(keys / "root.key"), "--root-public-key",
                              str(keys / "root.pub"), *timestamp)  # fmt: skip
    assert rooted.returncode == 0, rooted.stderr
    assert (keys / "release-root.json").is_file()
    assert SOURCE in policy
    return checkout


def pushed_candidates(tmp_path_factory: pytest.TempPathFactory, *names: str) -> tuple[Checkout, list[str]]:
    """A checkout whose policy covers a new repository of the loopback registry (which must answer), and the
    digests of one tiny image on its pinned base pushed there per name, as candidate-<name> with the revisions
    "a" * 40, "b" * 40, ..."""
    registry.require_registry()
    checkout = make_checkout(tmp_path_factory.mktemp("release") / "checkout", unique_repository())
    revisions = (letter * 40 for letter in "abcdefgh")
    return checkout, [checkout.candidate(f"candidate-{name}", next(revisions)) for name in names]


def put_with_subject(repository: str, source_tag: str, target_tag: str, subject_digest: str | None) -> str:
    """Copy the manifest `source_tag` to `target_tag` of the same repository, its `subject` rewritten to
    `subject_digest` (the manifest is unsigned: anyone who can push can do this); return the new digest."""
    url = f"http://{registry.REGISTRY_HOST}/v2/{repository}/manifests"
    found = requests.get(f"{url}/{source_tag}", headers={"Accept": OCI_MANIFEST}, timeout=30)
    found.raise_for_status()
    document = json.loads(found.content)
    if subject_digest is not None:
        document["subject"]["digest"] = subject_digest
    pushed = requests.put(
        f"{url}/{target_tag}", data=json.dumps(document).encode(), headers={"Content-Type": OCI_MANIFEST}, timeout=30
    )
    assert pushed.status_code == 201, pushed.text
    return str(pushed.headers["Docker-Content-Digest"])


def skopeo_copy(source: str, destination: str) -> None:
    copied = subprocess.run(
        ["skopeo", "copy", "--preserve-digests", "--src-tls-verify=false", "--dest-tls-verify=false",
         f"docker://{source}", f"docker://{destination}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert copied.returncode == 0, copied.stderr


def folded(text: str) -> str:
    return " ".join(text.split())
