"""`build.py check-tag`: a release tag names the torch version matrix.yaml builds, or nothing is built."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.release.tag_check import check_release_tag

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("ref", "rebuild"), [("v2.9.1", 0), ("refs/tags/v2.9.1", 0), ("v2.9.1-2", 2), ("refs/tags/v2.9.1-13", 13)]
)
def test_tags_of_the_matrix_torch_pass(matrix: Matrix, ref: str, rebuild: int) -> None:
    tag = check_release_tag(matrix, ref)
    assert (tag.torch, tag.rebuild) == ("2.9.1", rebuild)
    assert tag.tag == ref.removeprefix("refs/tags/")


@pytest.mark.parametrize(
    ("ref", "needle"),
    [
        ("v2.9.0", "names torch 2.9.0, but matrix.yaml builds torch 2.9.1"),
        ("v2.10.1", "names torch 2.10.1"),
        ("v2.9", "is not a release tag"),
        ("2.9.1", "is not a release tag"),
        ("v2.9.1-rc1", "is not a release tag"),
        ("v2.9.1-0", "is not a release tag"),
        ("v2.9.1.post1", "is not a release tag"),
        ("refs/heads/v2.9.1", "is not a release tag"),
    ],
)
def test_other_tags_are_refused_with_the_fix(matrix: Matrix, ref: str, needle: str) -> None:
    with pytest.raises(UserError) as caught:
        check_release_tag(matrix, ref)
    assert needle in caught.value.cause
    assert "v2.9.1" in caught.value.fix


def test_targets_that_disagree_have_no_release_tag(matrix: Matrix) -> None:
    targets = dict(matrix.targets)
    targets["cu126"] = targets["cu126"].model_copy(update={"torch": "2.9.0"})
    split = matrix.model_copy(update={"targets": targets})
    with pytest.raises(UserError, match=r"different torch versions \(cu126: 2.9.0, cu128: 2.9.1"):
        check_release_tag(split, "v2.9.1")


def check_tag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "check-tag", *args], capture_output=True, text=True, timeout=60
    )


def test_the_cli_exit_statuses() -> None:
    ok = check_tag("v2.9.1")
    assert ok.returncode == 0, ok.stderr
    assert "release tag v2.9.1 matches matrix.yaml: torch 2.9.1" in ok.stdout
    assert json.loads(check_tag("refs/tags/v2.9.1-2", "--json").stdout) == {
        "tag": "v2.9.1-2",
        "torch": "2.9.1",
        "rebuild": 2,
        "matches": True,
    }
    bad = check_tag("v2.8.0")
    assert bad.returncode == 2
    assert "error: the tag 'v2.8.0' names torch 2.8.0" in bad.stderr
