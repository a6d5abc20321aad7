"""Make sure the base image exists: use it if present, pull it if possible, else bootstrap it offline."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pytorch_cuda.engine.protocol import Engine
from pytorch_cuda.errors import EngineError
from pytorch_cuda.matrix.bases import Base
from pytorch_cuda.matrix.debian_suites import deb_lines
from pytorch_cuda.matrix.pinned_base import BOOTSTRAP_LABEL, check_pin
from pytorch_cuda.references import parse_reference

IMPORT_CHANGES = ("ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 'CMD ["/bin/bash"]')


@dataclass(frozen=True)
class BaseOutcome:
    ref: str
    image_id: str
    how: str  # "present", "pinned" (the digest-pinned upstream, here already), "pulled" or "bootstrapped"
    detail: str = ""


# The engine bind-mounts /etc/hosts and /etc/resolv.conf into every RUN; where the base lacks them, each RUN
# creates and removes the mount points and /etc's time in its layer is the wall clock. Empty files in the base
# (the engine's own are mounted over them) keep every layer above reproducible.
MOUNT_POINT_HOOK = '--customize-hook=: > "$1/etc/hosts"; : > "$1/etc/resolv.conf"'


def bootstrap_command(base: Base, output: Path, source_date_epoch: int | None = None) -> list[str]:
    """mmdebstrap's command; with SOURCE_DATE_EPOCH set, it clamps every file's time to it (and dpkg and apt
    write no run-dependent logs), so two bootstraps from one archive state give one tar."""
    recipe = base.bootstrap
    epoch = [] if source_date_epoch is None else ["env", f"SOURCE_DATE_EPOCH={source_date_epoch}"]
    return [
        *epoch,
        "mmdebstrap",
        f"--variant={recipe.variant}",
        f"--components={','.join(recipe.components)}",
        '--aptopt=Acquire::Retries "3"',
        "--dpkgopt=path-exclude=/usr/share/doc/*",
        "--dpkgopt=path-include=/usr/share/doc/*/copyright",
        "--dpkgopt=path-exclude=/usr/share/man/*",
        "--dpkgopt=path-exclude=/usr/share/locale/*",
        MOUNT_POINT_HOOK,
        recipe.suite,
        str(output),
        str(recipe.mirror),
        *deb_lines(recipe),  # mmdebstrap adds -updates and -security only when given no mirror
    ]


def bootstrap_inputs(argv: list[str], output: Path) -> str:
    """The bootstrap command as its label records it (the tarball's path is OUTPUT)."""
    return " ".join("OUTPUT" if arg == str(output) else arg for arg in argv)


def bootstrap_labels(argv: list[str], output: Path, source_date_epoch: int | None = None) -> list[str]:
    """`docker import --change` lines that record how the base was made: the mmdebstrap inputs and when (the
    SOURCE_DATE_EPOCH it was made with, else the wall clock)."""
    inputs = bootstrap_inputs(argv, output)
    moment = datetime.now(UTC) if source_date_epoch is None else datetime.fromtimestamp(source_date_epoch, tz=UTC)
    when = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return [f"LABEL {BOOTSTRAP_LABEL}={_label_value(inputs)} {BOOTSTRAP_LABEL}-date={_label_value(when)}"]


def _label_value(text: str) -> str:
    """A LABEL value that the engine's Dockerfile parser gives back as it is: quoted, and `$` escaped, or it
    expands `$1` of the mount-point hook to nothing and the recorded recipe never equals the one it runs (every
    build would then bootstrap the base again)."""
    return json.dumps(text).replace("$", "\\$")


def ensure_base(
    engine: Engine,
    base: Base,
    *,
    allow_pull: bool = True,
    log: Callable[[str], None] = print,
    run: Callable[[list[str]], subprocess.CompletedProcess[str]] | None = None,
    source_date_epoch: int | None = None,
) -> BaseOutcome:
    """The base image, present, pulled or bootstrapped; refused when matrix.yaml pins another digest."""
    outcome = _find_or_make(engine, base, allow_pull=allow_pull, log=log, run=run, epoch=source_date_epoch)
    if outcome.how == "bootstrapped":
        log(
            f"bootstrapped {base.image}: its digest is {outcome.image_id} (the mmdebstrap inputs are its label "
            f"{BOOTSTRAP_LABEL}); `build.py release pin-base` pins it in matrix.yaml"
        )
    check_pin(base, outcome.image_id, outcome.how)
    return outcome


def _find_or_make(
    engine: Engine,
    base: Base,
    *,
    allow_pull: bool,
    log: Callable[[str], None],
    run: Callable[[list[str]], subprocess.CompletedProcess[str]] | None,
    epoch: int | None = None,
) -> BaseOutcome:
    pinned = parse_reference(base.upstream).pinned if base.upstream else None
    pull_reason = "pulling disabled"
    if pinned is not None:  # a digest pin decides, whatever the local name points at now
        found, pull_reason = _pinned(engine, base, pinned, allow_pull=allow_pull, log=log)
        if found is not None:
            return found
    existing = engine.image_id(base.image)
    stale = _other_recipe(engine, base, epoch) if existing else None
    if existing and stale is None:
        return BaseOutcome(base.image, existing, "present")
    if stale is not None:  # e.g. made before the empty /etc/hosts, or at another file time: not reproducible
        log(f"base {base.image} was bootstrapped by another recipe ({stale[:200]}); bootstrapping it again")
        return _bootstrap(engine, base, run or _run_command, log, epoch)
    if allow_pull and base.upstream and pinned is None:
        log(f"base {base.image} is not here; pulling {base.upstream}")
        pull_reason = engine.pull(base.upstream) or ""
        if not pull_reason:
            upstream_id = engine.image_id(base.upstream)
            if upstream_id:
                engine.tag(upstream_id, base.image)
                return BaseOutcome(base.image, upstream_id, "pulled", base.upstream)
    log(f"cannot pull {base.upstream} ({pull_reason}); bootstrapping {base.image} from {base.bootstrap.mirror}")
    return _bootstrap(engine, base, run or _run_command, log, epoch)


def _other_recipe(engine: Engine, base: Base, epoch: int | None) -> str | None:
    """The recorded bootstrap command of a present base that this one (at this file time) would not run; None
    when it would, when the base was not bootstrapped here (pulled: not ours to judge), or with no file time."""
    recorded = engine.image_labels(base.image).get(BOOTSTRAP_LABEL)
    if recorded is None or epoch is None:
        return None
    output = Path("OUTPUT")
    return None if recorded == bootstrap_inputs(bootstrap_command(base, output, epoch), output) else recorded


def _pinned(
    engine: Engine, base: Base, pinned: str, *, allow_pull: bool, log: Callable[[str], None]
) -> tuple[BaseOutcome | None, str]:
    """The digest-pinned upstream, here already or pulled by its digest, tagged as the local name;
    or None and why it could not be had (then the local base, or a bootstrap, stands in: logged)."""
    image_id = engine.image_id(pinned)
    how = "pinned"
    if image_id is None:
        if not allow_pull:
            return None, "pulling disabled"
        log(f"base {base.image} is pinned to {pinned}; pulling it by digest")
        reason = engine.pull(pinned) or ""
        image_id = None if reason else engine.image_id(pinned)
        if image_id is None:
            reason = reason or "not found after the pull"
            log(f"cannot pull the pinned base {pinned} ({reason}); the local base {base.image} stands in if present")
            return None, reason
        how = "pulled"
    if engine.image_id(base.image) != image_id:
        engine.tag(image_id, base.image)
    return BaseOutcome(base.image, image_id, how, pinned), ""


def _run_command(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def _bootstrap(
    engine: Engine,
    base: Base,
    run: Callable[[list[str]], subprocess.CompletedProcess[str]],
    log: Callable[[str], None],
    epoch: int | None = None,
) -> BaseOutcome:
    if shutil.which("mmdebstrap") is None:
        raise EngineError(
            cause=f"the base image {base.image} is not here, cannot be pulled, and mmdebstrap (to bootstrap it from "
            "the Debian archive) is not installed",
            fix="install it with `sudo apt-get install mmdebstrap` (scripts/setup-docker.sh does), or load the base "
            f"image yourself (`docker load` / `docker tag <image> {base.image}`)",
        )
    with tempfile.TemporaryDirectory(prefix="pytorch-cuda-base-") as workdir:
        tarball = Path(workdir) / "rootfs.tar"
        argv = bootstrap_command(base, tarball, epoch)
        log("running " + " ".join(argv))
        result = run(argv)
        if result.returncode != 0 or not tarball.exists():
            tail = " / ".join((result.stderr or result.stdout or "").strip().splitlines()[-3:])
            raise EngineError(
                cause=f"bootstrapping {base.image} with mmdebstrap failed (exit {result.returncode}): {tail}",
                fix=f"check that {base.bootstrap.mirror} is reachable and that this runs as root (or install uidmap "
                "for unprivileged mmdebstrap), then build again",
            )
        changes = (*IMPORT_CHANGES, *bootstrap_labels(argv, tarball, epoch))
        image_id = engine.import_rootfs(tarball, base.image, changes, epoch)
    return BaseOutcome(base.image, image_id, "bootstrapped", str(base.bootstrap.mirror))
