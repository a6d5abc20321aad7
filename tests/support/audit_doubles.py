"""The audit tests' stand-ins for pip-audit's process and a CycloneDX SBOM (shared by tests/pytorch_cuda/audit/)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

SBOM: dict[str, Any] = {
    "bomFormat": "CycloneDX",
    "specVersion": "1.6",
    "version": 1,
    "components": [
        {
            "type": "library",
            "bom-ref": "ecdsa-ref",
            "name": "ecdsa",
            "version": "0.19.2",
            "purl": "pkg:pypi/ecdsa@0.19.2",
        },
        {
            "type": "library",
            "bom-ref": "jinja-ref",
            "name": "Jinja2",
            "version": "2.10",
            "purl": "pkg:pypi/Jinja2@2.10",
        },
    ],
}


def pip_audit_answering(answers: dict[str, dict[str, Any]], seen: list[str]) -> Any:
    """pip-audit's process: for each `name==version` of the file it is given, the entry `answers` has for it."""

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        pins = Path(argv[argv.index("-r") + 1]).read_text()
        seen.append(pins)
        dependencies = [{"name": line.split("==")[0], **answers[line]} for line in pins.splitlines()]
        return subprocess.CompletedProcess(argv, 1, json.dumps({"dependencies": dependencies, "fixes": []}), "")

    return run
