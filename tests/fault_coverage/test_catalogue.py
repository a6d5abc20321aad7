"""The catalogue: unique names, every fault says what it models and what it trips, every patch is used and exists."""

from __future__ import annotations

import ast

from fault_coverage.case_model import FAULT_KINDS, PATCHES, matches
from fault_coverage.catalogue import CASES, CONTROLS


def test_names_are_unique_and_the_untouched_control_comes_first() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))
    assert CONTROLS[0].name == "untouched"
    assert CONTROLS[0].injection.describe() == "nothing (untouched)"


def test_every_fault_models_a_failure_and_targets_checks_its_selection_runs() -> None:
    for fault in (c for c in CASES if c.kind == "fault"):
        assert fault.models, fault.name
        assert fault.trips or fault.gap, f"{fault.name}: a fault that targets nothing must say why (its gap)"
        if fault.select is not None:
            words = {
                w for w in fault.select.replace("(", " ").replace(")", " ").split() if w not in ("or", "and", "not")
            }
            for target in fault.trips:
                assert any(word in target for word in words), f"{fault.name}: -k {fault.select!r} misses {target}"


def test_every_patch_exists_is_used_and_imports_only_torch_and_the_standard_library() -> None:
    used = {case.injection.patch for case in CASES if case.injection.patch}
    present = {path.stem for path in PATCHES.glob("*.py")}
    assert used <= present, f"missing patches: {sorted(used - present)}"
    assert present <= used, f"patches no case uses: {sorted(present - used)}"
    for path in PATCHES.glob("*.py"):
        assert ast.get_docstring(ast.parse(path.read_text())), f"{path.name} says nothing of what it models"


def test_a_bare_name_matches_every_parameter_and_a_parameter_only_itself() -> None:
    assert matches("test_gemm", "test_gemm[fp16]")
    assert matches("test_gemm", "test_gemm")
    assert matches("test_gemm[fp16]", "test_gemm[fp16]")
    assert not matches("test_gemm[fp16]", "test_gemm[bf16]")
    assert not matches("test_gemm", "test_gemm_ratio[fp16]")


def test_every_fault_has_a_kind_and_a_patch_says_which() -> None:
    kinds = {case.name: case.fault_kind for case in CASES if case.kind == "fault"}
    assert set(kinds.values()) <= set(FAULT_KINDS)
    assert kinds["tf32-forced-env"] == "environment"
    assert kinds["host-cudnn-preloaded"] == "environment"
    assert kinds["cudnn-off"] == "setting"
    assert kinds["lowp-kernels-lose-precision"] == "library patch"
    assert kinds["arch-list-without-device"] == "replaced value"
    assert kinds["pins-drifted"] == "replaced value"
    assert [c.fault_kind for c in CONTROLS] == [None] * len(CONTROLS)
    real = {name for name, kind in kinds.items() if kind in ("environment", "setting")}
    assert {"host-cudnn-on-ld-library-path", "launch-blocking", "cublas-workspace-none"} <= real


def test_the_controls_are_legitimate_setups_over_the_whole_suite() -> None:
    names = [c.name for c in CONTROLS]
    assert {"deterministic-algorithms", "expandable-segments", "cudnn-benchmark-on"} <= set(names)
    assert all(c.select is None and c.markers == "cpu or gpu or multigpu" for c in CONTROLS)
