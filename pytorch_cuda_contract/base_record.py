"""The base image in the build manifest: its ``base`` section and the record the build writes.

Standard library only; one home for both sides. The builder (``pytorch_cuda.matrix.manifest_writer``) writes
the manifest's ``base`` section with :class:`BaseSection`; the image build writes
``/etc/pytorch-cuda/base.json`` (the base image's ID and every Debian package's version, from
dpkg), which :func:`load_base_record` reads; the suite checks the image still matches it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


class BaseRecordError(ValueError):
    """The base section or record exists but cannot be used."""


@dataclass(frozen=True)
class BaseSection:
    """``manifest["base"]``: what the base is and how it is made (mmdebstrap inputs when bootstrapped)."""

    image: str
    upstream: str | None
    bootstrap: Mapping[str, object] = field(default_factory=dict)
    record: str = ""  # where the image keeps its BaseRecord

    def as_json(self) -> dict[str, object]:
        return {
            "image": self.image,
            "upstream": self.upstream,
            "bootstrap": dict(self.bootstrap),
            "record": self.record,
        }

    @classmethod
    def from_json(cls, data: object) -> BaseSection:
        if not isinstance(data, dict) or not isinstance(data.get("image"), str):
            raise BaseRecordError("manifest 'base' must be an object with a string 'image'")
        bootstrap = data.get("bootstrap", {})
        if not isinstance(bootstrap, dict):
            raise BaseRecordError("manifest 'base.bootstrap' must be an object")
        upstream = data.get("upstream")
        return cls(
            data["image"], upstream if isinstance(upstream, str) else None, bootstrap, str(data.get("record", ""))
        )


@dataclass(frozen=True)
class BaseRecord:
    """``base.json``: the base image's ID and the Debian package versions the build found."""

    image: str
    id: str
    dpkg: Mapping[str, str]


def load_base_record(path: Path) -> BaseRecord | None:
    """The record at ``path``; None when there is none (a bare host)."""
    if not path.exists():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BaseRecordError(f"{path} is not readable JSON: {exc}") from exc
    return parse_base_record(text, str(path))


def parse_base_record(text: str | bytes, where: str) -> BaseRecord:
    """A record's JSON text (``where`` names it in errors)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BaseRecordError(f"{where} is not readable JSON: {exc}") from exc
    dpkg = data.get("dpkg") if isinstance(data, dict) else None
    if not isinstance(dpkg, dict) or not all(isinstance(v, str) for v in dpkg.values()):
        raise BaseRecordError(f"{where} has no 'dpkg' object of package -> version")
    return BaseRecord(str(data.get("image", "")), str(data.get("id", "")), dict(dpkg))


def parse_dpkg_query(text: str) -> dict[str, str]:
    """``dpkg-query -W -f='${Package}\\t${Version}\\n'`` output -> {package: version}."""
    pairs = (line.split("\t", 1) for line in text.splitlines() if "\t" in line)
    return {pair[0]: pair[1] for pair in pairs}


def dpkg_drift(recorded: Mapping[str, str], live: Mapping[str, str]) -> list[str]:
    """How the installed Debian packages differ from the record (empty: they match)."""
    drift = []
    for name in sorted(recorded.keys() | live.keys()):
        before, now = recorded.get(name), live.get(name)
        if before != now:
            drift.append(f"{name}: recorded {before or 'absent'}, installed {now or 'absent'}")
    return drift
