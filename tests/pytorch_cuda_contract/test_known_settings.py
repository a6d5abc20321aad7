"""The table of settings a shipped stack is measured to break: when an entry applies, and what it says."""

from __future__ import annotations

import pytest

from pytorch_cuda_contract.known_settings import KNOWN_SETTING_VARIABLES, setting_problems


@pytest.mark.parametrize("value", ["EAGER", "eager", " Eager "])
def test_eager_module_loading_is_named_on_nccl_2_27(value: str) -> None:
    found = setting_problems({"CUDA_MODULE_LOADING": value}, "2.27.5")
    assert [p.variable for p in found] == ["CUDA_MODULE_LOADING"]
    hint = found[0].hint()
    assert "invalid resource handle" in hint
    assert "unset CUDA_MODULE_LOADING" in hint
    assert "h100-shipped" in hint  # the measurement it rests on


@pytest.mark.parametrize(
    ("environ", "nccl"),
    [
        ({"CUDA_MODULE_LOADING": "LAZY"}, "2.27.5"),
        ({}, "2.27.5"),
        ({"CUDA_MODULE_LOADING": "EAGER"}, "2.28.9"),  # torch 2.11's NCCL passed under it
        ({"CUDA_MODULE_LOADING": "EAGER"}, None),  # NCCL not known: nothing claimed
    ],
)
def test_nothing_is_claimed_outside_what_was_measured(environ: dict[str, str], nccl: str | None) -> None:
    assert setting_problems(environ, nccl) == ()


def test_the_variables_the_banner_reads_are_the_tables() -> None:
    assert KNOWN_SETTING_VARIABLES == ("CUDA_MODULE_LOADING",)
