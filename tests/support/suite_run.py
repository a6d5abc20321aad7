"""Run the conformance suite in a subprocess, as the image does, and read its JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "conformance"
# Variables of the caller that would change what the suite sees.
SCRUBBED_ENV = (
    "PYTORCH_CUDA_MANIFEST",
    "PYTEST_ADDOPTS",
    "CC",
    "LD_LIBRARY_PATH",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "NVIDIA_TF32_OVERRIDE",
    "PYTHONPATH",
    "CONFORMANCE_ALLOW_NVLS",
)


@dataclass(frozen=True)
class SuiteRun:
    returncode: int
    output: str
    document: dict[str, Any]

    def result(self, test_name: str) -> dict[str, Any]:
        """The JSON record of the one test whose node id ends with ``::test_name``."""
        matches = [r for nodeid, r in self.document["tests"].items() if nodeid.endswith(f"::{test_name}")]
        assert len(matches) == 1, (
            f"{test_name}: {len(matches)} records in {sorted(self.document['tests'])}\n{self.output}"
        )
        record: dict[str, Any] = matches[0]
        return record

    def outcome(self, test_name: str) -> str:
        return str(self.result(test_name)["outcome"])

    def message(self, test_name: str) -> str:
        return str(self.result(test_name)["message"] or "")


def manifest_document(**overrides: Any) -> dict[str, Any]:
    """A schema-1 manifest like the cu128 image's, with fields overridden."""
    document: dict[str, Any] = {
        "schema": 1,
        "project": "pytorch-cuda",
        "target": "cu128",
        "flavour": "runtime",
        "python": "3.13",
        "venv": "/opt/pytorch",
        "pins": {"torch": "2.9.1+cu128", "cuda": "12.8", "cudnn": "9.10.2.21", "nccl": "2.27.5", "triton": "3.5.1"},
        "wheels": {"cudnn": "nvidia-cudnn-cu12", "nccl": "nvidia-nccl-cu12", "cublas": "nvidia-cublas-cu12"},
        "min_driver": "570.26",
        "cuda_compat_driver": "525.60.13",
    }
    document.update(overrides)
    return document


def write_manifest(directory: Path, document: Mapping[str, Any]) -> Path:
    path = directory / "manifest.json"
    path.write_text(json.dumps(document))
    return path


def run_suite(
    workdir: Path,
    *args: str,
    marker: str | None = "cpu",
    keyword: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 600,
) -> SuiteRun:
    """``python -m pytest <repo>/conformance [-m MARKER] [-k KEYWORD] ARGS`` from ``workdir`` (marker None: no -m,
    as the image's `conformance` runs with no arguments)."""
    json_path = workdir / "conformance.json"
    # An empty ini file in the work dir stands in for the image, where no
    # pyproject.toml sits above /opt/pytorch-cuda/conformance.
    ini = workdir / "pytest.ini"
    if not ini.exists():
        ini.write_text("[pytest]\n")
    command = [sys.executable, "-m", "pytest", "-c", str(ini), "-p", "no:cacheprovider", str(SUITE)]
    command += ["-q", *(["-m", marker] if marker is not None else [])]
    command += ["--conformance-json", str(json_path), "-W", "ignore::DeprecationWarning"]
    if keyword is not None:
        command += ["-k", keyword]
    command += list(args)
    environment = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
    environment.update(env or {})
    result = subprocess.run(
        command, cwd=workdir, env=environment, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    output = result.stdout + result.stderr
    assert json_path.exists(), f"the suite wrote no JSON (exit {result.returncode}):\n{output[-4000:]}"
    return SuiteRun(result.returncode, output, json.loads(json_path.read_text()))
