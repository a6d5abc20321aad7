"""The build manifest (``/etc/pytorch-cuda/manifest.json``, schema 1): one model that writes and reads it.

The builder (``pytorch_cuda.matrix.manifest_writer``) fills a :class:`Manifest` and writes :meth:`Manifest.as_json`;
the suite reads the file back into the same class with :func:`parse_manifest`. On a bare host the same
format serves as an "expectations file" passed with ``--manifest FILE``.  Lookup order:
``--manifest`` option, then ``$PYTORCH_CUDA_MANIFEST``, then the default path.
An explicitly named file that is missing or invalid is an error (pin checks
fail); a missing default file means "no manifest" (pin checks skip).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pytorch_cuda_contract import paths
from pytorch_cuda_contract.base_record import BaseRecordError, BaseSection

DEFAULT_MANIFEST_PATH: Final = Path(paths.MANIFEST_PATH)
MANIFEST_ENV_VAR: Final = paths.MANIFEST_ENV
MANIFEST_SCHEMA: Final = 1
PIN_NAMES: Final = ("torch", "cuda", "cudnn", "nccl", "triton")
# The target of an expectations file for a bare GPU host: it pins versions, but it cannot speak for the host's own
# system libraries (a CUDA toolkit, cuDNN and NCCL packages), which an image's manifest can.
BARE_HOST_TARGET: Final = "bare-host"


class ManifestError(ValueError):
    """The manifest file exists but cannot be used."""


@dataclass(frozen=True)
class Pins:
    """Exact versions the image promises; ``None`` when the manifest has no such pin."""

    torch: str | None
    cuda: str | None
    cudnn: str | None
    nccl: str | None
    triton: str | None

    def get(self, name: str) -> str | None:
        value: str | None = getattr(self, name)
        return value

    def as_json(self) -> dict[str, str | None]:
        return {name: self.get(name) for name in PIN_NAMES}


@dataclass(frozen=True)
class Manifest:
    """Every pin of one image variant. A child flavour (jupyter) adds its ``parent`` and its packages."""

    schema: int
    project: str
    target: str
    flavour: str
    python: str | None
    venv: str | None
    pins: Pins
    wheels: Mapping[str, str]
    min_driver: str | None
    cuda_compat_driver: str | None
    base: BaseSection | None = None
    parent: str | None = None
    flavour_packages: Mapping[str, str] | None = None
    raw: Mapping[str, object] = field(default_factory=dict, compare=False)  # the file as read (unknown keys too)

    def as_json(self) -> dict[str, object]:
        """The document as the builder writes it (key order is the file's)."""
        document: dict[str, object] = {
            "schema": self.schema,
            "project": self.project,
            "target": self.target,
            "flavour": self.flavour,
            "python": self.python,
            "venv": self.venv,
            "pins": self.pins.as_json(),
            "wheels": dict(self.wheels),
            "min_driver": self.min_driver,
            "cuda_compat_driver": self.cuda_compat_driver,
        }
        if self.base is not None:
            document["base"] = self.base.as_json()
        if self.parent is not None:
            document["parent"] = self.parent
        if self.flavour_packages is not None:
            document["flavour_packages"] = dict(self.flavour_packages)
        return document

    def as_text(self) -> str:
        """The file's text: indented JSON and a final newline."""
        return json.dumps(self.as_json(), indent=2, sort_keys=False) + "\n"


@dataclass(frozen=True)
class ManifestLookup:
    """Where the suite looked for a manifest and what it found."""

    path: Path
    origin: str  # "--manifest", "$PYTORCH_CUDA_MANIFEST" or "default"
    manifest: Manifest | None
    error: str | None

    @property
    def skip_reason(self) -> str:
        return f"no build manifest ({self.path}); pass --manifest FILE to check pins"

    def as_json(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "origin": self.origin,
            "found": self.manifest is not None,
            "error": self.error,
            "content": dict(self.manifest.raw) if self.manifest is not None else None,
        }


def _optional_str(data: Mapping[str, object], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ManifestError(f"{where}{key} must be a string, got {value!r}")
    return value


def _required_str(data: Mapping[str, object], key: str) -> str:
    value = _optional_str(data, key, "")
    if value is None:
        raise ManifestError(f"missing required field {key!r}")
    return value


def parse_manifest(data: object) -> Manifest:
    """Validate decoded JSON and build a :class:`Manifest`."""
    if not isinstance(data, dict):
        raise ManifestError("top level must be a JSON object")
    schema = data.get("schema")
    if schema != MANIFEST_SCHEMA:
        raise ManifestError(f"unsupported schema {schema!r} (this suite reads schema {MANIFEST_SCHEMA})")
    pins_data = data.get("pins", {})
    if not isinstance(pins_data, dict):
        raise ManifestError("'pins' must be an object")
    pins = Pins(**{name: _optional_str(pins_data, name, "pins.") for name in PIN_NAMES})
    wheels_data = data.get("wheels", {})
    if not isinstance(wheels_data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in wheels_data.items()
    ):
        raise ManifestError("'wheels' must map library names to wheel names (strings)")
    try:
        base = BaseSection.from_json(data["base"]) if "base" in data else None
    except BaseRecordError as exc:
        raise ManifestError(str(exc)) from exc
    packages = data.get("flavour_packages")
    if packages is not None and not (isinstance(packages, dict) and all(isinstance(v, str) for v in packages.values())):
        raise ManifestError("'flavour_packages' must map package names to versions (strings)")
    return Manifest(
        schema=MANIFEST_SCHEMA,
        project=_required_str(data, "project"),
        target=_required_str(data, "target"),
        flavour=_optional_str(data, "flavour", "") or "",
        python=_optional_str(data, "python", ""),
        venv=_optional_str(data, "venv", ""),
        pins=pins,
        wheels=dict(wheels_data),
        min_driver=_optional_str(data, "min_driver", ""),
        cuda_compat_driver=_optional_str(data, "cuda_compat_driver", ""),
        base=base,
        parent=_optional_str(data, "parent", ""),
        flavour_packages=dict(packages) if packages is not None else None,
        raw=data,
    )


def load_manifest(path: Path) -> Manifest:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"cannot read {path}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{path} is not valid JSON: {exc}") from exc
    try:
        return parse_manifest(data)
    except ManifestError as exc:
        raise ManifestError(f"{path}: {exc}") from exc


def find_manifest(option: str | None, environ: Mapping[str, str]) -> ManifestLookup:
    """Resolve and load the manifest following the documented lookup order."""
    if option:
        path, origin = Path(option), "--manifest"
    elif environ.get(MANIFEST_ENV_VAR):
        path, origin = Path(environ[MANIFEST_ENV_VAR]), f"${MANIFEST_ENV_VAR}"
    else:
        path, origin = DEFAULT_MANIFEST_PATH, "default"
    explicit = origin != "default"
    if not path.exists():
        error = f"manifest {path} (from {origin}) does not exist" if explicit else None
        return ManifestLookup(path=path, origin=origin, manifest=None, error=error)
    try:
        manifest = load_manifest(path)
    except ManifestError as exc:
        return ManifestLookup(path=path, origin=origin, manifest=None, error=f"invalid manifest: {exc}")
    return ManifestLookup(path=path, origin=origin, manifest=manifest, error=None)
