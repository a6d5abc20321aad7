"""Take the image's SBOM (CycloneDX JSON, made by the Dockerfile's sbom stage) out of the built image.

The build writes it beside its log and JSON, as ``<log dir>/sbom-<variant>.cdx.json``, and counts
what it lists: Python packages (``pkg:pypi/``) and Debian packages (``pkg:deb/``). An image without
one, or with one that is not CycloneDX JSON, fails the build before any tag moves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.engine.protocol import Engine
from pytorch_cuda.errors import EngineError
from pytorch_cuda_contract import paths

SBOM_PATH = paths.SBOM_PATH


@dataclass(frozen=True)
class SbomSummary:
    path: Path
    spec_version: str
    components: int
    python: int
    deb: int

    def as_dict(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "in_image": SBOM_PATH,
            "spec_version": self.spec_version,
            "components": self.components,
            "python": self.python,
            "deb": self.deb,
        }


def sbom_file(log_dir: Path, variant_key: str) -> Path:
    return log_dir / f"sbom-{variant_key}.cdx.json"


def collect_sbom(engine: Engine, ref: str, variant_key: str, log_dir: Path) -> SbomSummary:
    raw = engine.read_file(ref, SBOM_PATH)
    if raw is None:
        raise EngineError(
            cause=f"{ref} has no SBOM at {SBOM_PATH}; no tag was moved",
            fix="re-render images/ (`python build.py render`: the Dockerfile's sbom stage writes it) and build again",
        )
    try:
        document = json.loads(raw)
        if document.get("bomFormat") != "CycloneDX" or not isinstance(document.get("components"), list):
            raise ValueError("no bomFormat 'CycloneDX' with a components list")
    except (ValueError, AttributeError) as exc:
        raise EngineError(
            cause=f"the SBOM {SBOM_PATH} in {ref} is not CycloneDX JSON ({exc}); no tag was moved",
            fix="look at the sbom stage's output in the build log (build-output/build-<variant>.log) and build again",
        ) from exc
    purls = [str(c.get("purl", "")) for c in document["components"] if isinstance(c, dict)]
    target = sbom_file(log_dir, variant_key)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".tmp")
    partial.write_bytes(raw)
    partial.replace(target)
    return SbomSummary(
        path=target,
        spec_version=str(document.get("specVersion", "")),
        components=len(purls),
        python=sum(p.startswith("pkg:pypi/") for p in purls),
        deb=sum(p.startswith("pkg:deb/") for p in purls),
    )
