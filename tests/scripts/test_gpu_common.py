"""gpu/common.sh: every GPU script runs on the carried shipped stack unless STACK=host asks for the host's torch, and
never falls back to the host's torch when the stack is not there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pytorch_cuda_contract.carried_stack import MARKER, CarriedStack

ROOT = Path(__file__).resolve().parents[2]


def _python_of(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = '. gpu/common.sh; gpu_python; echo "PY=$PY"; echo "MANIFEST=${PYTORCH_CUDA_MANIFEST:-}"'
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "STACK", "PYTORCH_CUDA_MANIFEST")}
    return subprocess.run(["bash", "-c", script], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True)


def _carried_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    marker = CarriedStack(
        variant="cu128-runtime", lock="shipped_stack/locks/cu128-runtime.py312.lock", lock_sha256="ab" * 32,
        root=str(tmp_path), prefix=str(venv), python="3.12", image_python="3.13", image_venv="/opt/pytorch",
        packages={"torch": "2.9.1"},
    )  # fmt: skip
    (venv / MARKER).write_text(json.dumps(marker.as_json()))
    return venv


def test_the_carried_stack_is_the_default_and_its_manifest_is_judged(tmp_path: Path) -> None:
    venv = _carried_venv(tmp_path)
    done = _python_of({"SHIPPED_STACK_VENV": str(venv)})
    assert done.returncode == 0, done.stderr
    assert f"PY={venv}/bin/python" in done.stdout
    assert f"MANIFEST={ROOT}/images/cu128-runtime/manifest.json" in done.stdout


def test_a_marker_the_contract_cannot_read_stops_with_a_paragraph(tmp_path: Path) -> None:
    venv = _carried_venv(tmp_path)
    (venv / MARKER).write_text(json.dumps({"variant": "cu128-runtime"}))
    done = _python_of({"SHIPPED_STACK_VENV": str(venv)})
    assert done.returncode == 3
    assert "the carried stack's marker" in done.stderr
    assert "not a schema-1 carried-stack marker" in done.stderr


def test_no_carried_stack_stops_with_a_paragraph_not_the_hosts_torch(tmp_path: Path) -> None:
    done = _python_of({"SHIPPED_STACK_VENV": str(tmp_path / "missing")})
    assert done.returncode == 3
    assert "PY=" not in done.stdout
    assert "the shipped stack is not on this host" in done.stderr
    assert "STACK=host" in done.stderr


def test_stack_host_asks_for_the_hosts_python_and_a_typo_is_refused(tmp_path: Path) -> None:
    host = _python_of({"STACK": "host", "SHIPPED_STACK_VENV": str(tmp_path / "missing")})
    assert host.returncode == 0
    assert "PY=python3" in host.stdout
    typo = _python_of({"STACK": "shiped"})
    assert typo.returncode == 2
    assert "STACK=shiped is neither shipped" in typo.stderr
