"""plan_bump over the real matrix.yaml with in-memory indexes: a torch move drags the pins its wheel sets,
a shared pin moves only as far as every selected target's index allows, a dry plan writes nothing."""

from __future__ import annotations

from pathlib import Path

import yaml

from pytorch_cuda.bump.bump_plan import plan_bump
from pytorch_cuda.bump.bump_policy import parse_policy
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.package_index.simple_index import IndexFile

ROOT = Path(__file__).resolve().parents[3]
PYPI, CU126 = "https://pypi.org/simple", "https://download.pytorch.org/whl/cu126"


def _wheel(name: str, version: str, tag: str = "py3-none-any") -> IndexFile:
    filename = f"{name.replace('-', '_')}-{version}-{tag}.whl"
    return IndexFile(filename, f"https://files.example/{filename}", False, None, True)


INDEXES = {
    PYPI: {
        "torch": [_wheel("torch", v, "cp313-cp313-manylinux_2_28_x86_64") for v in ("2.9.1", "2.9.2", "2.10.0")],
        "numpy": [_wheel("numpy", v) for v in ("2.5.5", "2.5.6", "2.5.7")],
    },
    CU126: {
        "torch": [_wheel("torch", "2.9.1+cu126", "cp313-cp313-manylinux_2_28_x86_64")],
        "numpy": [_wheel("numpy", v) for v in ("2.5.5", "2.5.6")],
    },
}


def _files(index: str, name: str) -> list[IndexFile]:
    return INDEXES[index].get(name, [])


def _pins(files: list[IndexFile], version: str, python: str, local: str | None, family: str) -> dict[str, str]:
    assert (version, python, local, family) == ("2.9.2", "3.13", None, "cu12")  # PyPI's torch has no local label
    return {"triton": "3.5.2", "cudnn": "9.10.3.1", "nccl": "2.27.6"}


def test_torch_drags_its_pins_and_shared_pins_wait_for_every_index() -> None:
    matrix = load_matrix(ROOT / "matrix.yaml")
    policy = parse_policy(matrix.policy)
    plan = plan_bump(matrix, policy, ["cu128", "cu126"], _files, _pins)
    moved = {move.where: (move.resolution.old, move.resolution.new) for move in plan.moved}
    assert moved == {
        "targets.cu128.torch": ("2.9.1", "2.9.2"),
        "targets.cu128.triton": ("3.5.1", "3.5.2"),
        "targets.cu128.cudnn": ("9.10.2.21", "9.10.3.1"),
        "targets.cu128.nccl": ("2.27.5", "2.27.6"),
        "python_packages.numpy": ("2.5.5", "2.5.6"),  # 2.5.7 is on PyPI, not yet on the cu126 index
    }
    assert [(m.where, m.resolution.held_back) for m in plan.held_back] == [("targets.cu128.torch", "2.10.0")]
    text = (ROOT / "matrix.yaml").read_text(encoding="utf-8")
    rewritten = yaml.safe_load(plan.rewrite(text))
    assert rewritten["targets"]["cu128"]["cudnn"] == "9.10.3.1"
    assert rewritten["targets"]["cu126"]["torch"] == "2.9.1"
    assert (ROOT / "matrix.yaml").read_text(encoding="utf-8") == text


def test_one_target_alone_reads_only_its_index() -> None:
    matrix = load_matrix(ROOT / "matrix.yaml")
    plan = plan_bump(matrix, parse_policy({"torch": "pinned"}), ["cu128"], _files, _pins)
    assert {move.where: move.resolution.new for move in plan.moved} == {"python_packages.numpy": "2.5.7"}
