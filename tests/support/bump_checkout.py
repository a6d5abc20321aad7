"""A copy of the repository for `build.py bump` tests: its one target, cu128, installs from a loopback package
index (tests/support/loopback_index.py) and its base's Debian mirror is a loopback archive
(tests/support/loopback_debian.py), so bump reads nothing from the internet. The devel flavour (CUDA 13 only) is
dropped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytorch_cuda.cli.main import main
from pytorch_cuda.locks.debian_record import parse_record, record_path
from tests.support.loopback_debian import LoopbackArchive
from tests.support.loopback_index import Release, torch_release

ROOT = Path(__file__).resolve().parents[2]
FIRST = (
    torch_release("2.9.1", "3.5.1", "9.10.2.21", "2.27.5"),
    Release("triton", "3.5.1"),
    Release("nvidia-cudnn-cu12", "9.10.2.21"),
    Release("nvidia-nccl-cu12", "2.27.5"),
    Release("numpy", "2.5.5"),
    Release("nvidia-ml-py", "13.615.71"),
    Release("pytest", "9.2.0"),
    Release("jupyterlab", "4.6.6"),
    Release("ipykernel", "7.4.0"),
    Release("nbclient", "0.11.0"),
)


def committed_debian_packages() -> dict[str, str]:
    """The committed images/debian-trixie.lock: what a current loopback archive serves."""
    path = record_path(ROOT, "trixie")
    return dict(parse_record(path.read_text(encoding="utf-8"), str(path), "trixie").packages)


def current_archive(folder: Path) -> LoopbackArchive:
    """A loopback archive whose trixie has every recorded package at its recorded version, and nothing newer."""
    archive = LoopbackArchive(folder)
    archive.publish("", committed_debian_packages())
    archive.publish("-updates", {})
    archive.publish("-security", {})
    return archive


def checkout(root: Path, index_url: str, mirror: str, base: dict[str, str] | None = None) -> Path:
    """The copy; `base` overrides keys of the trixie base (upstream, digest)."""
    for folder in (
        "templates",
        "images",
        "conformance",
        "pytorch_cuda_contract",
        "pytorch_cuda_entry",
        "precision_check",
    ):
        if (ROOT / folder).exists():
            shutil.copytree(ROOT / folder, root / folder)
    matrix = yaml.safe_load((ROOT / "matrix.yaml").read_text(encoding="utf-8"))
    matrix["targets"] = {"cu128": {**matrix["targets"]["cu128"], "index": index_url}}
    del matrix["flavours"]["devel"]
    matrix["bases"]["trixie"]["bootstrap"]["mirror"] = mirror
    matrix["bases"]["trixie"].update(base or {})
    (root / "matrix.yaml").write_text(yaml.safe_dump(matrix, sort_keys=False), encoding="utf-8")
    return root


def bump(root: Path, capsys: pytest.CaptureFixture[str], *flags: str, status: int) -> dict[str, Any]:
    """`build.py bump --json` on the copy, which must exit with `status`; its JSON."""
    capsys.readouterr()
    assert main(["bump", "--root", str(root), "--json", *flags]) == status
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result
