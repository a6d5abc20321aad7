"""The shipped stack carried to a bare GPU host: the marker its venv holds, and which stack a run is on.

`python -m shipped_stack` (here) packs the image's locked wheels for the host's Python and, there, unpacks them into
a venv that cannot see the host's own packages, then writes :data:`MARKER` into that venv's prefix. The suite reads
it back with :func:`find_carried_stack` to declare the run's stack:

- ``image``: inside an image (its manifest is at the in-image path): every check judges the image, as strict as ever;
- ``carried``: the image's locked stack, carried to a bare host (the marker is in ``sys.prefix``): checks that judge
  the image's own filesystem judge the carried stack's equivalent, and those with none are "not judged";
- ``host``: the bare host's own torch.

Standard library only: the host side of the carrier and the suite both import it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytorch_cuda_contract import paths

MARKER: Final = "carried-stack.json"
# What a results file's "stack" holds besides its kind on a carried stack: the marker less its schema.
CARRIED_FIELDS: Final = ("variant", "lock", "lock_sha256", "root", "prefix", "python", "image_python", "image_venv")
MARKER_SCHEMA: Final = 1
STACK_KINDS: Final = ("image", "carried", "host")
# The packages whose versions name a stack (a history is keyed by them).
STACK_PACKAGES: Final = ("torch", "triton", "nvidia-cudnn-cu12", "nvidia-nccl-cu12", "nvidia-cublas-cu12")


class CarriedStackError(ValueError):
    """A marker that exists but cannot be read: the run cannot say which stack it is on."""


@dataclass(frozen=True)
class CarriedStack:
    """What the carrier wrote when it made the venv: where the stack lives and what it was made from."""

    variant: str  # the image variant whose lock was carried, e.g. cu128-runtime
    lock: str  # the host lock's path in the checkout
    lock_sha256: str  # sha256 of that lock's text: the pack it came from
    root: str  # the folder the stack was unpacked into, on the host
    prefix: str  # the venv's prefix (sys.prefix when the suite runs on it)
    python: str  # the host's Python (major.minor) the lock was resolved for
    image_python: str  # the image's Python (major.minor): the carried stack cannot match it
    image_venv: str  # the image's venv path: the carried stack lives elsewhere
    packages: Mapping[str, str]  # name -> version, as installed from the lock

    @property
    def site_packages(self) -> str:
        return os.path.join(self.prefix, "lib", f"python{self.python}", "site-packages")

    def as_json(self) -> dict[str, object]:
        return {
            "schema": MARKER_SCHEMA,
            "variant": self.variant,
            "lock": self.lock,
            "lock_sha256": self.lock_sha256,
            "root": self.root,
            "prefix": self.prefix,
            "python": self.python,
            "image_python": self.image_python,
            "image_venv": self.image_venv,
            "packages": dict(sorted(self.packages.items())),
        }


def parse_carried_stack(data: object) -> CarriedStack:
    if not isinstance(data, dict) or data.get("schema") != MARKER_SCHEMA:
        raise CarriedStackError(f"not a schema-{MARKER_SCHEMA} carried-stack marker")
    texts = CARRIED_FIELDS
    missing = [key for key in texts if not isinstance(data.get(key), str) or not data[key]]
    packages = data.get("packages")
    if missing or not isinstance(packages, dict):
        raise CarriedStackError(f"carried-stack marker lacks {', '.join(missing) or 'packages'}")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in packages.items()):
        raise CarriedStackError("carried-stack marker: packages must map names to versions")
    return CarriedStack(packages=dict(packages), **{key: str(data[key]) for key in texts})


def find_carried_stack(prefix: str) -> CarriedStack | None:
    """The marker of the venv at `prefix` (pass sys.prefix), None where there is none."""
    path = Path(prefix) / MARKER
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CarriedStackError(f"{path}: cannot be read ({exc})") from exc
    try:
        return parse_carried_stack(json.loads(text))
    except (ValueError, CarriedStackError) as exc:
        raise CarriedStackError(f"{path}: {exc}") from exc


def stack_kind(prefix: str, manifest_path: str = paths.MANIFEST_PATH) -> str:
    """image, carried or host. Inside an image the image wins: a marker dropped into its venv changes nothing."""
    if os.path.exists(manifest_path):
        return "image"
    return "carried" if find_carried_stack(prefix) is not None else "host"


@dataclass(frozen=True)
class RunStack:
    """Which stack one run was on, as its results file names it ("stack"): the kind, and the carried stack's marker
    where the kind is carried. ``recorded`` is False for a file written before runs named their stack (its kind
    inferred by the reader); ``error`` says why a marker found in the venv could not be read."""

    kind: str  # one of STACK_KINDS
    carried: CarriedStack | None = None
    recorded: bool = True
    error: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in STACK_KINDS:
            raise CarriedStackError(f"stack kind must be one of {', '.join(STACK_KINDS)}, not {self.kind!r}")
        if (self.kind == "carried") != (self.carried is not None):
            raise CarriedStackError("a carried stack, and only a carried stack, names its marker")

    @property
    def library_root(self) -> str | None:
        """Where the carried stack's NVIDIA libraries live (``<site-packages>/nvidia``); None off a carried stack."""
        return None if self.carried is None else os.path.join(self.carried.site_packages, "nvidia")

    def as_json(self) -> dict[str, object]:
        """The results file's "stack" object."""
        document: dict[str, object] = {"kind": self.kind}
        if self.carried is not None:
            marker = self.carried.as_json()
            document.update({key: marker[key] for key in (*CARRIED_FIELDS, "packages")})
        if self.error is not None:
            document["error"] = self.error
        return document


def parse_run_stack(data: Mapping[str, object]) -> RunStack:
    """A results file's "stack" object back into a :class:`RunStack` (raises CarriedStackError when malformed)."""
    kind = data.get("kind")
    error = data.get("error")
    if kind not in STACK_KINDS:
        raise CarriedStackError(f"stack kind must be one of {', '.join(STACK_KINDS)}, not {kind!r}")
    carried = parse_carried_stack({**data, "schema": MARKER_SCHEMA}) if kind == "carried" else None
    return RunStack(str(kind), carried, error=error if isinstance(error, str) else None)


def read_run_stack(prefix: str, manifest_path: str = paths.MANIFEST_PATH) -> RunStack:
    """The stack of a run whose interpreter's prefix is `prefix` (pass sys.prefix). Never raises: a marker that
    cannot be read gives kind host (every check as strict as on a bare host) with the error, which the suite
    reports as a failure."""
    if os.path.exists(manifest_path):
        return RunStack("image")
    try:
        carried = find_carried_stack(prefix)
    except CarriedStackError as exc:
        return RunStack("host", error=str(exc))
    return RunStack("host") if carried is None else RunStack("carried", carried)
