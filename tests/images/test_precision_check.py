"""`precision-check` inside the real cu12 image (built through build.py): the overflow example's
verdict, a JSON report of the right schema, and bad input as one paragraph with exit status 2."""

from __future__ import annotations

import json

import pytest

from precision_check import check_report
from pytorch_cuda_contract import paths
from tests.support.containers import ImageRunner
from tests.support.integration import BuiltImage

pytestmark = pytest.mark.integration

EXAMPLE = f"{paths.PRECISION_CHECK_EXAMPLES_DIR}/overflow_mlp.py:factory"
REPORT = "/tmp/precision-check.json"


def test_overflow_example_says_use_bf16_and_names_the_layer(built: BuiltImage, runner: ImageRunner) -> None:
    finished = runner.run(
        built.ref,
        ["sh", "-c", f'precision-check {EXAMPLE} --steps 5 --json {REPORT} && echo "JSON $(cat {REPORT})"'],
    )
    assert finished.exit_code == 0, finished.output
    assert "verdict: fp16 would overflow in `expand` at step 0" in finished.output
    assert "use bf16" in finished.output
    report = json.loads(finished.output.split("JSON ", 1)[1])
    assert (report["schema"], report["version"]) == (check_report.SCHEMA, check_report.VERSION)
    assert report["verdict"]["dtype"] == "bf16"
    assert report["device"]["kind"] == "cpu"


def test_bad_input_is_one_paragraph_and_exit_2(built: BuiltImage, runner: ImageRunner) -> None:
    finished = runner.run(built.ref, ["precision-check", "missing.py:factory"])
    assert finished.exit_code == 2
    assert "Traceback" not in finished.output
    assert "precision-check: the file missing.py does not exist" in finished.output
