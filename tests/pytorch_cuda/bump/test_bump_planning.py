"""plan_bump over the real matrix.yaml with in-memory indexes: a torch move drags the pins its wheel sets,
a shared pin moves only as far as every selected target's index allows, a dry plan writes nothing."""

from __future__ import annotations

from pathlib import Path

import yaml

from pytorch_cuda.bump.bump_plan import plan_bump
from pytorch_cuda.bump.bump_policy import parse_policy
from pytorch_cuda.matrix.build_matrix import load_matrix
from tests.support.bump_indexes import files, pins

ROOT = Path(__file__).resolve().parents[3]


def test_torch_drags_its_pins_and_shared_pins_wait_for_every_index() -> None:
    matrix = load_matrix(ROOT / "matrix.yaml")
    policy = parse_policy(matrix.policy)
    plan = plan_bump(matrix, policy, ["cu128", "cu126"], files, pins)
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
    plan = plan_bump(matrix, parse_policy({"torch": "pinned"}), ["cu128"], files, pins)
    assert {move.where: move.resolution.new for move in plan.moved} == {"python_packages.numpy": "2.5.7"}
