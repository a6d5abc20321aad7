"""The measurements that the verdict leans on: forward-hook overflow detection (agreement: test_agreement.py)."""

from __future__ import annotations

import torch

from precision_check.check_report import Overflow
from precision_check.measure import ActivationWatch, GradWatch


def _nested() -> torch.nn.Module:
    torch.manual_seed(0)
    inner = torch.nn.Linear(4, 4)
    with torch.no_grad():
        inner.weight.fill_(1e5)
    return torch.nn.Sequential(torch.nn.Sequential(torch.nn.Identity(), inner), torch.nn.ReLU())


def test_watch_names_the_innermost_module_that_left_fp16_range_first_step_only() -> None:
    model = _nested()
    watch = ActivationWatch(model)
    for step in range(3):
        model(torch.ones(2, 4))
        watch.end_step(step)
    watch.remove()
    assert [o.module for o in watch.overflows] == ["0.1", "0", "1", "Sequential"]
    assert watch.overflows[0] == Overflow("0.1", 0, watch.overflows[0].max_abs)
    assert watch.overflows[0].max_abs is not None
    assert watch.overflows[0].max_abs > 65504


def test_watch_in_nonfinite_only_mode_ignores_large_finite_values_and_catches_inf() -> None:
    model = _nested()
    watch = ActivationWatch(model, nonfinite_only=True)
    model(torch.ones(2, 4))
    watch.end_step(0)
    assert watch.overflows == []
    model(torch.full((2, 4), float("inf")))
    watch.end_step(1)
    assert watch.overflows[0] == Overflow("0.0", 1, None)


def test_a_healthy_model_records_nothing_and_hooks_come_off() -> None:
    model = torch.nn.Linear(4, 4)
    watch = ActivationWatch(model)
    model(torch.ones(2, 4))
    watch.end_step(0)
    watch.remove()
    assert watch.overflows == []
    assert not model._forward_hooks


def test_grad_watch_counts_zeros_and_names_non_finite_parameters_dense_or_sparse() -> None:
    torch.manual_seed(0)
    emb = torch.nn.Embedding(10, 4, sparse=True)
    lin = torch.nn.Linear(4, 1)
    model = torch.nn.ModuleDict({"emb": emb, "lin": lin})
    watch = GradWatch(model)
    for step in range(2):
        model.zero_grad(set_to_none=True)
        out = lin(emb(torch.tensor([1, 2])))
        if step == 1:
            out = out * torch.tensor(float("inf"))
        out.sum().backward()
        watch.after_backward(step)
    assert watch.finish(3)[2] is None  # no backward at step 2
    assert [f.step for f in watch.faults] == [1, 1, 1]
    assert {f.parameter for f in watch.faults} == {"emb.weight", "lin.weight", "lin.bias"}
