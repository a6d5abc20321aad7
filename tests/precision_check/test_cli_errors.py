"""Bad input: one paragraph on stderr naming the cause and the fix, exit status 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from precision_check.agreement import MIN_STEPS
from precision_check.bad_input import EXIT_BAD_INPUT
from precision_check.command import main

ROOT = Path(__file__).resolve().parents[2]

GOOD = """
import torch
def batch(step):
    return torch.randn(4, 3), torch.randn(4, 1)
def factory():
    return torch.nn.Linear(3, 1), batch, torch.nn.MSELoss()
"""

CASES = {
    "not_a_target": ("", "model.py", "is not of the form MODULE:FACTORY"),
    "missing_file": ("", "missing.py:factory", "the file missing.py does not exist"),
    "missing_module": ("", "no_such_module_xyz:factory", "no module named 'no_such_module_xyz'"),
    "missing_factory": (GOOD, "model.py:make", "has no 'make' (its functions and classes: batch, factory)"),
    "not_callable": (GOOD + "\nthing = 3\n", "model.py:thing", "is a int, not a function"),
    "import_raises": ("raise RuntimeError('boom at import')", "model.py:factory", "RuntimeError: boom at import"),
    "factory_raises": (
        "def factory():\n    raise ValueError('no data')",
        "model.py:factory",
        "model.py:factory() raised ValueError: no data",
    ),
    "returns_a_model_only": (
        "import torch\ndef factory():\n    return torch.nn.Linear(3, 1)",
        "model.py:factory",
        "returned a Linear, not a model, a batch function and a loss",
    ),
    "loss_not_callable": (
        GOOD + "def bad():\n    return torch.nn.Linear(3, 1), batch, 'mse'\n",
        "model.py:bad",
        "returned a loss that is a str, not a function",
    ),
    "model_not_module": (
        GOOD + "def bad():\n    return 'model', batch, torch.nn.MSELoss()\n",
        "model.py:bad",
        "returned a model that is a str, not a torch.nn.Module",
    ),
    "batch_not_a_pair": (
        GOOD + "def bad():\n    return torch.nn.Linear(3, 1), lambda s: torch.randn(4, 3), torch.nn.MSELoss()\n",
        "model.py:bad",
        "batch(0) returned a Tensor, not a pair (inputs, target)",
    ),
    "loss_not_scalar": (
        GOOD + "def bad():\n    return torch.nn.Linear(3, 1), batch, lambda out, y: out - y\n",
        "model.py:bad",
        "the loss function returned Tensor of shape (4, 1), not a scalar tensor",
    ),
    "raises_in_step_1": (
        GOOD + "def bad():\n    return torch.nn.Linear(5, 1), batch, torch.nn.MSELoss()\n",
        "model.py:bad",
        "the model raised in step 1 under fp32: RuntimeError: mat1 and mat2 shapes cannot be multiplied",
    ),
}


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, *argv: str) -> tuple[int, str, str]:
    if source:
        (tmp_path / "model.py").write_text(source)
    status = main([*argv, "--steps", "5", "--timed-steps", "1", "--device", "cpu"])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _assert_one_paragraph(status: int, out: str, err: str, expected: str) -> None:
    assert status == 2
    assert out == ""
    # Progress lines ("precision-check: [fp32] ...") may come first; the error is one paragraph after them.
    lines = err.splitlines()
    paragraph = [line for line in lines if not line.startswith("precision-check: [")]
    assert len(paragraph) == 1, err  # one paragraph, one line
    assert lines[-1] == paragraph[0], err
    assert paragraph[0].startswith("precision-check: "), err
    assert "Traceback" not in err
    assert expected in err


@pytest.mark.parametrize("case", CASES, ids=str)
def test_bad_input_is_one_paragraph_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target, expected = CASES[case]
    monkeypatch.chdir(tmp_path)
    status, out, err = _run(tmp_path, capsys, source, target)
    _assert_one_paragraph(status, out, err, expected)


def test_a_model_that_fails_only_in_bf16_names_bf16(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = GOOD + (
        "class OnlyFp32(torch.nn.Linear):\n"
        "    def forward(self, x):\n"
        "        if torch.is_autocast_enabled('cpu'):\n"
        "            raise TypeError('no bf16 here')\n"
        "        return super().forward(x)\n"
        "def bad():\n    return OnlyFp32(3, 1), batch, torch.nn.MSELoss()\n"
    )
    monkeypatch.chdir(tmp_path)
    status, out, err = _run(tmp_path, capsys, source, "model.py:bad")
    _assert_one_paragraph(status, out, err, "the model raised in step 1 under bf16: TypeError: no bf16 here")
    assert "or leave bf16 out of --dtypes" in err


def test_unknown_dtype(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = _run(tmp_path, capsys, GOOD, "model.py:factory", "--dtypes", "fp32,fp8")
    _assert_one_paragraph(status, out, err, "unknown dtype 'fp8' in --dtypes")


def test_too_few_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(GOOD)
    status = main(["model.py:factory", "--steps", "4"])
    captured = capsys.readouterr()
    _assert_one_paragraph(status, captured.out, captured.err, "--steps 4 is too few")
    assert f"needs at least {MIN_STEPS} steps" in captured.err
    assert f"Give --steps {MIN_STEPS} or more" in captured.err
    assert EXIT_BAD_INPUT == 2
    status = main(["model.py:factory", "--timed-steps", "-1"])
    captured = capsys.readouterr()
    _assert_one_paragraph(status, captured.out, captured.err, "--timed-steps -1 is too few")


def test_bad_option(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = _run(tmp_path, capsys, GOOD, "model.py:factory", "--steps", "many")
    _assert_one_paragraph(status, out, err, "bad arguments: argument --steps: invalid int value: 'many'")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_asking_for_cuda_without_a_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "model.py").write_text(GOOD)
    status = main([str(tmp_path / "model.py") + ":factory", "--device", "cuda"])
    captured = capsys.readouterr()
    _assert_one_paragraph(status, captured.out, captured.err, "no CUDA GPU is visible")
    assert "--device cpu" in captured.err


def test_the_real_command_prints_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(
        GOOD + "def bad():\n    return torch.nn.Linear(5, 1), batch, torch.nn.MSELoss()\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "precision_check", f"{tmp_path}/model.py:bad", "--steps", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "the model raised in step 1 under fp32: RuntimeError" in done.stderr


def test_help_explains_every_verdict_kind_without_the_docs(capsys: pytest.CaptureFixture[str]) -> None:
    """The image has no docs/: --help itself says what each verdict kind means."""
    from precision_check.check_report import VERDICT_KIND_MEANING

    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for kind, meaning in VERDICT_KIND_MEANING.items():
        assert f"  {kind}" in out
        assert meaning.split(":")[0] in " ".join(out.split())
