"""`build.py bump` end to end on a package index served on 127.0.0.1 (tests/loopback_index.py): a newer torch
patch and numpy patch appear; bump moves them (and the triton, cuDNN and NCCL the new torch wheel pins),
holds back torch 2.10 and numpy 3, skips the yanked releases, re-locks the runtime and then the jupyter
flavour with the real uv against that index, and re-renders, so `render --check` passes. No Docker."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from pytorch_cuda.cli.main import main
from tests.loopback_index import LoopbackIndex, Release, torch_release

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
LATER = (
    torch_release("2.9.2", "3.5.2", "9.10.3.1", "2.27.6"),
    Release("triton", "3.5.2"),
    Release("nvidia-cudnn-cu12", "9.10.3.1"),
    Release("nvidia-nccl-cu12", "2.27.6"),
    torch_release("2.9.3", "3.5.2", "9.10.3.1", "2.27.6", yanked=True),
    torch_release("2.10.0", "3.6.0", "9.13.0.50", "2.28.1"),
    Release("numpy", "2.5.6"),
    Release("numpy", "3.0.0"),
    Release("nbclient", "0.11.1"),
    Release("nbclient", "0.11.2", yanked=True),
)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LoopbackIndex]:
    served = LoopbackIndex(tmp_path / "index")
    served.publish(*FIRST)
    served.start()
    yield served
    served.stop()


def _checkout(root: Path, index_url: str) -> Path:
    """A repository whose one target, cu128, installs from the loopback index (devel needs CUDA 13: dropped)."""
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
    (root / "matrix.yaml").write_text(yaml.safe_dump(matrix, sort_keys=False), encoding="utf-8")
    return root


def _bump(root: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, object]:
    assert main(["bump", "--root", str(root), "--json", *flags]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def test_bump_on_a_loopback_index(tmp_path: Path, index: LoopbackIndex, capsys: pytest.CaptureFixture[str]) -> None:
    root = _checkout(tmp_path / "repo", index.url)
    assert main(["lock", "--root", str(root)]) == 0  # the locks as they were, from the first releases
    runtime, jupyter = root / "images/cu128-runtime/requirements.lock", root / "images/cu128-jupyter"
    assert "torch==2.9.1+cu128" in runtime.read_text()
    capsys.readouterr()

    index.publish(*LATER)
    before = (root / "matrix.yaml").read_bytes()
    dry = _bump(root, capsys, "--dry-run")
    assert (root / "matrix.yaml").read_bytes() == before  # a dry run writes nothing
    moved = {row["pin"]: (row["old"], row["new"]) for row in dry["moved"]}  # type: ignore[attr-defined]
    assert moved == {
        "targets.cu128.torch": ("2.9.1", "2.9.2"),
        "targets.cu128.triton": ("3.5.1", "3.5.2"),
        "targets.cu128.cudnn": ("9.10.2.21", "9.10.3.1"),
        "targets.cu128.nccl": ("2.27.5", "2.27.6"),
        "python_packages.numpy": ("2.5.5", "2.5.6"),
        "flavours.jupyter.python_packages.nbclient": ("0.11.0", "0.11.1"),
    }
    held = {row["pin"]: row["newest"] for row in dry["held_back"]}  # type: ignore[attr-defined]
    assert held == {"targets.cu128.torch": "2.10.0", "python_packages.numpy": "3.0.0"}
    yanked = {row["pin"]: row["versions"] for row in dry["yanked_skipped"]}  # type: ignore[attr-defined]
    assert yanked == {"targets.cu128.torch": ["2.9.3"], "flavours.jupyter.python_packages.nbclient": ["0.11.2"]}

    applied = _bump(root, capsys)
    assert applied["moved"] == dry["moved"]
    pins = yaml.safe_load((root / "matrix.yaml").read_text())
    assert pins["targets"]["cu128"]["torch"] == "2.9.2"
    assert pins["python_packages"]["numpy"] == "2.5.6"
    lock = runtime.read_text()
    for pin in ("torch==2.9.2+cu128", "triton==3.5.2", "nvidia-cudnn-cu12==9.10.3.1", "numpy==2.5.6"):
        assert pin in lock
    assert "nbclient==0.11.1" in (jupyter / "requirements-flavour.lock").read_text()
    assert "torch==2.9.2+cu128" in (root / "images/cu128-runtime/layer-2-torch.lock").read_text()
    assert main(["render", "--check", "--root", str(root)]) == 0  # matrix, images/ and every lock agree

    capsys.readouterr()
    assert main(["bump", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "nothing to bump" in out
    assert "2.10.0" in out  # still listed as held back by policy


def test_a_bump_uv_cannot_lock_leaves_everything_as_it_was(
    tmp_path: Path, index: LoopbackIndex, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _checkout(tmp_path / "repo", index.url)
    assert main(["lock", "--root", str(root)]) == 0
    # torch 2.9.2 pins a cuDNN wheel the index does not have: bump reads the pin, uv cannot resolve it
    index.publish(torch_release("2.9.2", "3.5.1", "9.99.0.1", "2.27.5"))
    files = [root / "matrix.yaml", *sorted((root / "images").rglob("*.lock"))]
    before = {path: path.read_bytes() for path in files}
    capsys.readouterr()
    assert main(["bump", "--root", str(root)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "uv could not resolve" in err
    assert "matrix.yaml and images/ are put back as they were" in err
    assert {path: path.read_bytes() for path in files} == before
    assert main(["render", "--check", "--root", str(root)]) == 0
