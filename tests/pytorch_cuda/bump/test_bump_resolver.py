"""The resolver against a real index on 127.0.0.1 (tests/support/loopback_index.py): a newer patch is picked, a
policy-breaking major held back, a yanked release, a wheel for another Python or platform skipped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytorch_cuda.bump.bump_policy import Rule, parse_policy
from pytorch_cuda.bump.resolver import resolve
from pytorch_cuda.bump.torch_pins import torch_pins
from pytorch_cuda.package_index.simple_index import _from_json, project_files
from tests.support.loopback_index import LoopbackIndex, Release, torch_release

POLICY = parse_policy({"torch": "2.9.*", "python_packages": "compatible"})


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackIndex]:
    served = LoopbackIndex(tmp_path_factory.mktemp("index"))
    served.publish(
        torch_release("2.9.1", "3.5.1", "9.10.2.21", "2.27.5"),
        torch_release("2.9.2", "3.5.2", "9.10.3.1", "2.27.6"),
        torch_release("2.9.3", "3.5.2", "9.10.3.1", "2.27.6", yanked=True),
        torch_release("2.10.0", "3.6.0", "9.13.0.50", "2.28.1"),
        Release("numpy", "2.5.5"),
        Release("numpy", "2.5.6"),
        Release("numpy", "2.5.7", yanked=True),
        Release("numpy", "2.6.0", requires_python=">=3.14"),
        Release("numpy", "2.7.0", tag="cp313-cp313-win_amd64"),
        Release("numpy", "3.0.0"),
        Release("pytest", "9.2.0"),
    )
    served.start()
    yield served
    served.stop()


def test_a_newer_patch_is_picked_and_the_rest_skipped_for_a_reason(index: LoopbackIndex) -> None:
    files = project_files(index.url, "numpy", None)
    found = resolve("numpy", "2.5.5", POLICY.rule_for("numpy"), files, python="3.13")
    assert (found.old, found.new, found.moved) == ("2.5.5", "2.5.6", True)
    assert found.held_back == "3.0.0"  # a new major: outside `compatible`
    assert found.yanked == ("2.5.7",)
    assert "compatible" in found.why
    # 2.6.0 needs Python 3.14, 2.7.0 has only a Windows wheel: neither counts for the image's cp313 Linux
    assert resolve("numpy", "2.5.5", Rule("compatible"), files, python="3.14").new == "2.6.0"


def test_torch_keeps_to_its_series_and_its_local_label(index: LoopbackIndex) -> None:
    files = project_files(index.url, "torch", None)
    found = resolve("torch", "2.9.1", POLICY.torch, files, python="3.13", local="cu128")
    assert (found.new, found.held_back, found.yanked) == ("2.9.2", "2.10.0", ("2.9.3",))
    assert resolve("torch", "2.9.1", POLICY.torch, files, python="3.13", local="cu126").new == "2.9.1"


def test_torch_pins_come_from_the_new_wheels_metadata(index: LoopbackIndex) -> None:
    files = project_files(index.url, "torch", None)
    pins = torch_pins(files, "2.9.2", python="3.13", local="cu128", wheel_family="cu12", ca=None)
    assert pins == {"triton": "3.5.2", "cudnn": "9.10.3.1", "nccl": "2.27.6"}


def test_nothing_newer_is_not_a_move(index: LoopbackIndex) -> None:
    found = resolve("pytest", "9.2.0", Rule("compatible"), project_files(index.url, "pytest", None), python="3.13")
    assert (found.moved, found.held_back, found.yanked) == (False, None, ())
    assert project_files(index.url, "not-here", None) == []


def test_pep_691_json_pages() -> None:
    body = json.dumps(
        {
            "files": [
                {"filename": "a-1.0-py3-none-any.whl", "url": "a-1.0-py3-none-any.whl#sha256=00", "yanked": "bad"},
                {"filename": "a-1.1-py3-none-any.whl", "url": "/f/a-1.1-py3-none-any.whl", "core-metadata": {}},
                {"filename": "a-1.2-py3-none-any.whl", "url": "a-1.2-py3-none-any.whl", "requires-python": ">=3.14"},
            ]
        }
    )
    files = _from_json("https://example.org/simple/a/", body)
    assert [f.yanked for f in files] == [True, False, False]
    assert files[1].url == "https://example.org/f/a-1.1-py3-none-any.whl"
    assert [f.has_metadata for f in files] == [False, True, False]
    assert resolve("a", "1.0", Rule("compatible"), files, python="3.13").new == "1.1"


def test_a_page_that_does_not_answer_is_one_paragraph(tmp_path: Path) -> None:
    from pytorch_cuda.errors import EngineError

    with pytest.raises(EngineError, match=r"cannot read http://127\.0\.0\.1:9/simple/numpy/"):
        project_files("http://127.0.0.1:9/simple", "numpy", None)
