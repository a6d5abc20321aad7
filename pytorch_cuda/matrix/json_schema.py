"""matrix.schema.json: the JSON Schema of matrix.yaml, generated from the pydantic model (`build.py render`).

matrix.yaml names it in its first line (`# yaml-language-server: $schema=./matrix.schema.json`), so an editor
with the YAML language server completes keys and marks a typo as you type; `render --check` keeps it current.
"""

from __future__ import annotations

import json
from pathlib import Path

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.stale_file import StaleFile

SCHEMA_PATH = Path("matrix.schema.json")  # relative to the repository root
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_text() -> str:
    schema = Matrix.model_json_schema(by_alias=True, mode="validation")
    schema = {
        "$schema": DIALECT,
        "title": "pytorch-cuda matrix.yaml",
        "description": "Generated from pytorch_cuda/matrix/build_matrix.py by `python build.py render`; do not edit.",
        **{k: v for k, v in schema.items() if k != "title"},
    }
    return json.dumps(schema, indent=2) + "\n"


def write_schema(root: Path) -> list[Path]:
    """Write matrix.schema.json when it differs; the changed path, or nothing."""
    target, text = root / SCHEMA_PATH, schema_text()
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return []
    target.write_text(text, encoding="utf-8")
    return [SCHEMA_PATH]


def stale_schema(root: Path) -> list[StaleFile]:
    """matrix.schema.json, when it is not what the model generates (for `render --check`). A tree without it (a
    copy of matrix.yaml and templates/ elsewhere) is not stale: only an editor reads it."""
    target = root / SCHEMA_PATH
    if not target.exists():
        return []
    if target.read_text(encoding="utf-8") != schema_text():
        return [StaleFile(SCHEMA_PATH, "differs from the model in pytorch_cuda/matrix/build_matrix.py", "")]
    return []
