"""``python -m pytorch_cuda_sbom``: what the Dockerfile's sbom stage runs after cyclonedx-py."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pytorch_cuda_sbom.merge import merge, parse_dpkg, parse_os_release


def validation_errors(text: str, spec_version: str) -> str | None:
    """cyclonedx-python-lib's strict JSON-schema check of the document; None when it validates."""
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    error = JsonStrictValidator(SchemaVersion.from_version(spec_version)).validate_str(text)
    return None if error is None else str(error)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytorch_cuda_sbom", description=__doc__)
    parser.add_argument("--python-sbom", type=Path, required=True, help="cyclonedx-py's JSON for the venv")
    parser.add_argument("--dpkg", type=Path, required=True, help="dpkg-query output: name, version, arch per line")
    parser.add_argument("--os-release", type=Path, default=Path("/etc/os-release"))
    parser.add_argument("--name", required=True, help="the image's name (the main component)")
    parser.add_argument("--version", required=True, help="the image's version (its full tag)")
    parser.add_argument("--validate", action="store_true", help="fail unless the result validates (strict schema)")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    document = merge(
        json.loads(args.python_sbom.read_text(encoding="utf-8")),
        parse_dpkg(args.dpkg.read_text(encoding="utf-8")),
        image_name=args.name,
        image_version=args.version,
        os_release=parse_os_release(args.os_release.read_text(encoding="utf-8")),
    )
    text = json.dumps(document, indent=1, sort_keys=True) + "\n"
    if args.validate:
        problem = validation_errors(text, str(document.get("specVersion", "1.6")))
        if problem is not None:
            print(f"sbom: the merged SBOM does not validate: {problem}", file=sys.stderr)
            return 1
    args.output.write_text(text, encoding="utf-8")
    purls = [str(c.get("purl", "")) for c in document["components"]]
    print(
        f"sbom: {len(purls)} components ({sum(p.startswith('pkg:pypi/') for p in purls)} Python, "
        f"{sum(p.startswith('pkg:deb/') for p in purls)} Debian) -> {args.output}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
