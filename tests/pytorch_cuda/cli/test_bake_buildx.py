"""`build.py bake`'s file read by docker buildx itself: `docker buildx bake --print -f FILE GROUP...` must load it
and print back every target exactly as we wrote it (buildx drops an attribute it does not know, and refuses a
value of the wrong type or a group that names no target), each group with the same variants, and bake's default
group as ours. buildx runs standalone, without an engine: scripts/setup-buildx.sh installs Debian trixie's
docker-buildx (Debian 12 has none), else a docker client's own buildx plugin serves (GitHub's runners)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli

ROOT = Path(__file__).resolve().parents[3]
INSTALLED = Path(os.environ.get("PYTORCH_CUDA_BUILDX", "/opt/pytorch-cuda/buildx/docker-buildx"))
SETS = (
    "*.cache-to=type=registry,ref=r/c,mode=max",
    "cu12.cache-from=type=registry,ref=r/c",
    "cu12.cache-from=type=local,src=/tmp/c",
    "*.pull=true",
    "cu13.no-cache=1",
    "*.labels.org.example.team=ml",
    "cu128-runtime.output=type=image,name=r/x,push=true",
    "cu128-runtime.tags+=r/x:extra",
)


def _buildx() -> list[str]:
    """The buildx command: the one setup-buildx.sh installs, else the docker client's plugin; none is a failure."""
    if INSTALLED.is_file():
        return [str(INSTALLED)]
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "buildx", "version"], capture_output=True).returncode == 0:
        return [docker, "buildx"]
    pytest.fail(f"no docker buildx here ({INSTALLED} nor a docker client's plugin): run sudo scripts/setup-buildx.sh")


def _print(path: Path, *names: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_buildx(), "bake", "--print", "-f", str(path), *names], capture_output=True, text=True)


def _printed(path: Path, *names: str) -> dict[str, Any]:
    done = _print(path, *names)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def differences(ours: dict[str, Any], printed: dict[str, Any]) -> list[str]:
    """Where buildx's reading of our targets differs from what we wrote: an attribute dropped, changed or added."""
    found = []
    for name, target in ours["target"].items():
        theirs = printed["target"].get(name, {})
        found += [
            f"{name}.{key}: wrote {target.get(key)!r}, buildx read {theirs.get(key)!r}"
            for key in sorted(set(target) | set(theirs))
            if target.get(key) != theirs.get(key)
        ]
    return found


@pytest.fixture
def bake_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """The whole matrix's bake file, with a matrix.yaml group, a CA bundle and one --set of each kind."""
    matrix, bundle = tmp_path / "matrix.yaml", tmp_path / "ca.pem"
    matrix.write_text((ROOT / "matrix.yaml").read_text() + "\ngroups:\n  cuda12: [cu126, cu12]\n")
    bundle.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    monkeypatch.setenv("PIP_CERT", str(bundle))
    path = tmp_path / "docker-bake.json"
    argv = ["bake", "--matrix", str(matrix), "--file", str(path)]
    assert cli.main([*argv, *(f"--set={value}" for value in SETS)]) == 0, capsys.readouterr().err
    return path


def test_buildx_reads_back_every_target_and_group_as_we_wrote_them(bake_file: Path) -> None:
    ours = json.loads(bake_file.read_text())
    named = sorted(name for name in ours["group"] if name != "default")  # buildx makes its own default of these
    printed = _printed(bake_file, *named)
    assert set(printed["target"]) == set(ours["target"])
    assert differences(ours, printed) == []
    for name in named:
        assert printed["group"][name] == ours["group"][name], name
    assert ours["group"]["cuda12"]["targets"] == ["cu126-jupyter", "cu126-runtime", "cu128-jupyter", "cu128-runtime"]
    default = _printed(bake_file)  # no name: bake's default group
    assert set(default["target"]) == set(ours["group"]["default"]["targets"]) == {"cu128-runtime"}
    assert differences({"target": {"cu128-runtime": ours["target"]["cu128-runtime"]}}, default) == []
    runtime = printed["target"]["cu128-runtime"]
    assert runtime["cache-to"] == ["type=registry,ref=r/c,mode=max"]  # one entry, commas and all
    assert runtime["cache-from"] == ["type=registry,ref=r/c", "type=local,src=/tmp/c"]
    assert (runtime["pull"], runtime["tags"][-1]) == (True, "r/x:extra")


def test_buildx_catches_what_a_broken_bake_file_would_carry(bake_file: Path, tmp_path: Path) -> None:
    """Each fault the comparison must catch: a wrong type, an attribute buildx does not know, a missing target."""
    ours = json.loads(bake_file.read_text())

    def broken(change: str) -> Path:
        document = json.loads(bake_file.read_text())
        runtime = document["target"]["cu128-runtime"]
        if change == "type":
            runtime["pull"] = "maybe"  # what the old --set wrote
        elif change == "unknown":
            runtime["cache_to"] = runtime.pop("cache-to")  # a misspelt key: buildx drops it without a word
        else:
            document["group"]["cu12"]["targets"].append("cu128-runtimee")
        path = tmp_path / f"{change}.json"
        path.write_text(json.dumps(document))
        return path

    refused = _print(broken("type"), "all")
    assert refused.returncode == 1
    assert "a bool is required" in refused.stderr
    dropped = broken("unknown")
    assert differences(json.loads(dropped.read_text()), _printed(dropped, "all")) == [
        "cu128-runtime.cache_to: wrote ['type=registry,ref=r/c,mode=max'], buildx read None"
    ]
    missing = _print(broken("group"), "cu12")
    assert missing.returncode == 1
    assert "failed to find target cu128-runtimee" in missing.stderr
    assert differences(ours, _printed(bake_file, "all")) == []  # the file itself stays clean
