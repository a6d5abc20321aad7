"""buildx's conventions on build.py: --platform (linux/amd64 only, and why), bake's --set, buildx's
--metadata-file, the `bake` export and the shell completion (bash, run for real)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli
from pytorch_cuda.cli.metadata_file import write_metadata
from tests.support.cli_refusal import refusal

ROOT = Path(__file__).resolve().parents[3]


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert cli.main(argv) == 0
    found: dict[str, Any] = json.loads(capsys.readouterr().out)
    return found


def test_only_linux_amd64_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["build", "--target", "cu12", "--platform", "linux/arm64", "--dry-run"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--platform linux/arm64 is not built: every lock is resolved for manylinux_2_28 x86_64" in err
    assert _json(["build", "--target", "cu12", "--platform", "linux/amd64", "--dry-run", "--json"], capsys)


def test_set_labels_and_no_cache_reach_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["build", "--target", "cu12", "--flavour", "jupyter", "--dry-run", "--json"]
    found = _json([*argv, "--set", "cu128-*.labels.org.example.team=ml", "--set", "*-jupyter.no-cache=true"], capsys)
    assert found["labels"]["org.example.team"] == "ml"
    assert found["no_cache"] is True
    parent = found["built_first"][0]
    assert parent["labels"]["org.example.team"] == "ml"
    assert parent["no_cache"] is False  # *-jupyter does not match cu128-runtime


def test_a_bad_set_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["build", "--target", "cu12", "--dry-run", "--set", "cu128-*.lables.x=1"]) == 2
    assert "(did you mean 'labels'?)" in " ".join(capsys.readouterr().err.split())
    assert cli.main(["build", "--target", "cu12", "--dry-run", "--set", "nodot=1"]) == 2
    assert "is not PATTERN.KEY=VALUE" in " ".join(capsys.readouterr().err.split())


def test_metadata_in_buildx_keys(tmp_path: Path) -> None:
    one = {"variant": "cu128-runtime", "image_id": "sha256:" + "a" * 64, "tags": ["pytorch-cuda:v2.9"], "digests": {}}
    pushed = {**one, "digests": {"127.0.0.1:5000/ci/pytorch-cuda:2.9.1-x": "sha256:" + "b" * 64}}
    write_metadata(tmp_path / "one.json", {"cu128": one}, several=False)
    assert json.loads((tmp_path / "one.json").read_text()) == {
        "containerimage.config.digest": "sha256:" + "a" * 64,
        "image.name": "pytorch-cuda:v2.9",
        "pytorch-cuda.variant": "cu128-runtime",
    }
    write_metadata(tmp_path / "two.json", {"cu128": one, "cu130": pushed}, several=True)
    both = json.loads((tmp_path / "two.json").read_text())
    assert both["cu130"]["containerimage.digest"] == "sha256:" + "b" * 64
    assert both["cu130"]["image.name"] == "127.0.0.1:5000/ci/pytorch-cuda:2.9.1-x"


def test_bake_exports_every_variant_with_parents_as_contexts(capsys: pytest.CaptureFixture[str]) -> None:
    bake = _json(["bake", "--set", "*.cache-to=type=inline", "--set", "cu130-*.args.EXTRA=1"], capsys)
    targets = bake["target"]
    assert set(targets) == {
        "cu126-jupyter", "cu126-runtime", "cu128-jupyter", "cu128-runtime", "cu130-devel", "cu130-jupyter",
        "cu130-runtime",
    }  # fmt: skip
    runtime, jupyter = targets["cu128-runtime"], targets["cu128-jupyter"]
    assert runtime["dockerfile"] == "images/cu128-runtime/Dockerfile"
    assert runtime["args"] == {"BASE_IMAGE": "docker.io/library/debian:trixie-slim"}
    assert runtime["platforms"] == ["linux/amd64"]
    assert "pytorch-cuda:v2.9" in runtime["tags"]
    assert runtime["cache-to"] == ["type=inline"]
    parent = "pytorch-cuda:2.9.1-cuda12.8-cudnn9.10-py3.13-runtime"
    assert jupyter["args"] == {"PARENT_IMAGE": parent}
    assert jupyter["contexts"] == {parent: "target:cu128-runtime"}
    assert targets["cu130-devel"]["args"]["EXTRA"] == "1"
    assert "EXTRA" not in runtime["args"]
    assert bake["group"]["default"] == {"targets": ["cu128-runtime"]}
    assert bake["group"]["cu128"] == {"targets": ["cu128-jupyter", "cu128-runtime"]}
    for name, target in targets.items():
        assert (ROOT / target["dockerfile"]).is_file(), name


def test_bake_refuses_another_platform(capsys: pytest.CaptureFixture[str]) -> None:
    assert "is not built" in refusal_or_status(["bake", "--set", "*.platform=linux/arm64"], capsys)


def refusal_or_status(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(argv) == 2
    return " ".join(capsys.readouterr().err.split())


def test_bash_completes_commands_and_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert cli.main(["completion", "bash"]) == 0
    script = tmp_path / "build.py.bash"
    script.write_text(capsys.readouterr().out)

    def complete(*words: str, function: str = "_shtab_build_py") -> list[str]:
        line = " ".join(words)
        probe = (
            f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; COMP_LINE='{line}'; "
            f'COMP_POINT=${{#COMP_LINE}}; {function}; printf "%s\\n" "${{COMPREPLY[@]}}"'
        )
        done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
        return sorted(done.stdout.split())

    assert complete("build.py", "bu") == ["build", "bump"]
    assert "--target" in complete("build.py", "build", "--ta")
    assert complete("build.py", "build", "--progress", "pl") == ["plain"]
    # matrix.yaml's targets, aliases and groups, and its flavours
    assert complete("build.py", "build", "--target", "cu13") == ["cu13", "cu130"]
    assert complete("build.py", "bake", "--target", "a") == ["all"]
    assert complete("build.py", "push", "--flavour", "j") == ["jupyter"]
    # README's `.venv/bin/python build.py` (and python3 ./build.py); another script of it: bash's default, files
    venv = "_pytorch_cuda_venv_python"
    assert complete(".venv/bin/python", "build.py", "build", "--target", "cu12", function=venv) == [
        "cu12", "cu126", "cu128",
    ]  # fmt: skip
    assert complete(".venv/bin/python3", "./build.py", "bu", function=venv) == ["build", "bump"]
    assert complete(".venv/bin/python", "other.py", "bu", function=venv) == []
    # bash finds a compspec by the command word as typed: the .venv interpreters, build.py; python's own untouched
    specs = subprocess.run(
        ["bash", "-c", f"source {script}; complete -p"], capture_output=True, text=True, check=True
    ).stdout
    commands = {word for line in specs.splitlines() for word in line.split()[line.split().index("-F") + 2 :]}
    assert commands == {"build.py", ".venv/bin/python", ".venv/bin/python3"}
    assert refusal(["completion", "fish"], capsys)
