"""build.py starts without importing what only a registry call needs: oras-py imports jsonschema, whose format
checkers build a grammar at import (rfc3987_syntax, about 1.3 s on a 2-core runner), and every command, a no-op
rebuild included, paid for it before it was imported where the registry is called."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("oras", "jsonschema", "rfc3987_syntax")


def test_the_cli_imports_no_registry_library() -> None:
    probe = (
        f"import sys; import pytorch_cuda.cli.main; print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "", f"imported when build.py starts: {loaded.stdout.strip()}"


def test_the_registry_client_still_reaches_oras() -> None:
    probe = (
        "import sys; from pytorch_cuda.oci.registry_client import RegistryClient; "
        "RegistryClient('127.0.0.1:5999'); print('oras.provider' in sys.modules)"
    )
    made = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert made.stdout.strip() == "True"
