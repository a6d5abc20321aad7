"""`build.py bump` end to end on a package index served on 127.0.0.1 (tests/support/loopback_index.py): a newer torch
patch and numpy patch appear; bump moves them (and the triton, cuDNN and NCCL the new torch wheel pins),
holds back torch 2.10 and numpy 3, skips the yanked releases, re-locks the runtime and then the jupyter
flavour with the real uv against that index, and re-renders, so `render --check` passes. No Docker."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from pytorch_cuda.bump.plan_output import EXIT_REBUILD_NEEDED
from pytorch_cuda.cli.main import main
from pytorch_cuda.locks.file_format import diff_versions, parse_lock
from tests.support.bump_checkout import bump, checkout
from tests.support.loopback_debian import LoopbackArchive
from tests.support.loopback_index import LoopbackIndex, Release, torch_release

pytestmark = pytest.mark.integration

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


def test_bump_on_a_loopback_index(
    tmp_path: Path, loopback_index: LoopbackIndex, debian_archive: LoopbackArchive, capsys: pytest.CaptureFixture[str]
) -> None:
    root = checkout(tmp_path / "repo", loopback_index.url, debian_archive.mirror)
    assert main(["lock", "--root", str(root)]) == 0  # the locks as they were, from the first releases
    runtime, jupyter = root / "images/cu128-runtime/requirements.lock", root / "images/cu128-jupyter"
    assert "torch==2.9.1+cu128" in runtime.read_text()
    capsys.readouterr()

    loopback_index.publish(*LATER)
    before = (root / "matrix.yaml").read_bytes()
    dry = bump(root, capsys, "--dry-run", status=EXIT_REBUILD_NEEDED)
    assert dry["result"] == "rebuild needed"
    assert dry["debian_updates"] == []  # the loopback archive has the recorded Debian packages, nothing newer
    assert (root / "matrix.yaml").read_bytes() == before  # a dry run writes nothing
    moved = {row["pin"]: (row["old"], row["new"]) for row in dry["moved"]}
    assert moved == {
        "targets.cu128.torch": ("2.9.1", "2.9.2"),
        "targets.cu128.triton": ("3.5.1", "3.5.2"),
        "targets.cu128.cudnn": ("9.10.2.21", "9.10.3.1"),
        "targets.cu128.nccl": ("2.27.5", "2.27.6"),
        "python_packages.numpy": ("2.5.5", "2.5.6"),
        "flavours.jupyter.python_packages.nbclient": ("0.11.0", "0.11.1"),
    }
    held = {row["pin"]: row["newest"] for row in dry["held_back"]}
    assert held == {"targets.cu128.torch": "2.10.0", "python_packages.numpy": "3.0.0"}
    yanked = {row["pin"]: row["versions"] for row in dry["yanked_skipped"]}
    assert yanked == {"targets.cu128.torch": ["2.9.3"], "flavours.jupyter.python_packages.nbclient": ["0.11.2"]}

    assert "numpy==2.5.6" in dry["lock_diff"]  # the re-lock the real bump makes, shown, written nowhere
    assert "-torch==2.9.1+cu128" in dry["lock_diff"]
    assert "+torch==2.9.2+cu128" in dry["lock_diff"]
    assert "numpy==2.5.5" in runtime.read_text()
    assert list(tmp_path.glob("**/bump-dry-run-*")) == []

    shutil.copytree(root / "images", tmp_path / "before/images")
    applied = bump(root, capsys, status=EXIT_REBUILD_NEEDED)
    assert applied["moved"] == dry["moved"]
    assert applied["locks"] == dry["locks"]  # the dry run's lock changes are the real bump's, transitive pins too
    assert any(lock["changes"] for lock in dry["locks"])
    written = git_diff(tmp_path / "before/images", root / "images")  # what the real bump wrote, as git shows it
    assert written == changed_lines(dry["lock_diff"])  # every lock, layer slices too: the dry run showed each line
    assert {"images/cu128-runtime/requirements.lock", "images/cu128-runtime/layer-2-torch.lock"} <= set(written)
    for lock in dry["locks"]:  # each claimed version move is one the real bump made on disk
        path = Path(lock["path"])
        old, new = (parse_lock((folder / path).read_text()).versions() for folder in (tmp_path / "before", root))
        assert lock["changes"] == diff_versions(old, new), path
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
    assert "result: current" in out


def git_diff(before: Path, after: Path) -> dict[str, list[str]]:
    """`git diff --no-index` of two images/ folders, its *.lock files only: each file's removed and added lines."""
    done = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "--", str(before), str(after)], capture_output=True, text=True
    )
    assert done.returncode in {0, 1}, done.stderr
    return changed_lines(done.stdout.replace(f"a{before}/", "a/images/").replace(f"b{after}/", "b/images/"))


def changed_lines(diff: str) -> dict[str, list[str]]:
    """A unified diff's removed and added lines per *.lock file (named by its b/ side, its a/ side where it was
    removed), sorted: git and difflib may cut the same change into other hunks."""
    found: dict[str, list[str]] = {}
    removed = name = ""
    for line in diff.splitlines():
        if line.startswith("--- "):
            removed = line[4:].strip()
        elif line.startswith("+++ "):
            added = line[4:].strip()
            name = (removed if added == "/dev/null" else added)[2:]
        elif line[:1] in {"-", "+"} and name.endswith(".lock"):
            found.setdefault(name, []).append(line)
    return {name: sorted(lines) for name, lines in found.items()}


def test_a_bump_uv_cannot_lock_leaves_everything_as_it_was(
    tmp_path: Path, loopback_index: LoopbackIndex, debian_archive: LoopbackArchive, capsys: pytest.CaptureFixture[str]
) -> None:
    root = checkout(tmp_path / "repo", loopback_index.url, debian_archive.mirror)
    assert main(["lock", "--root", str(root)]) == 0
    # torch 2.9.2 pins a cuDNN wheel the index does not have: bump reads the pin, uv cannot resolve it
    loopback_index.publish(torch_release("2.9.2", "3.5.1", "9.99.0.1", "2.27.5"))
    files = [root / "matrix.yaml", *sorted((root / "images").rglob("*.lock"))]
    before = {path: path.read_bytes() for path in files}
    capsys.readouterr()
    assert main(["bump", "--root", str(root)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "uv could not resolve" in err
    assert "matrix.yaml and images/ are put back as they were" in err
    assert {path: path.read_bytes() for path in files} == before
    assert main(["render", "--check", "--root", str(root)]) == 0
