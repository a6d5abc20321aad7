"""The recommendation and the article's claims, computed from recorded runs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from pytorch_cuda_contract.advice import assess
from pytorch_cuda_contract.claims import CONFIRMED, NOT_MEASURABLE, REFUTED
from pytorch_cuda_contract.results_file import load_results, parse_results
from tests.support.recorded_runs import H100, H100_FLEET, H200, HALFWAY, T4, UNKNOWN_GPU


def _claims(path: Path) -> dict[str, str]:
    return {c.claim: c.verdict for c in assess(load_results(path)).claims}


def test_h200_recommends_bf16_and_tf32_with_the_numbers() -> None:
    a = assess(load_results(H200))
    assert a.choice == "bf16"
    precision = a.recommendation[0]
    assert "no GradScaler" in precision.text
    assert "777 TFLOP/s" in precision.numbers
    assert "746 TFLOP/s" in precision.numbers
    tf32 = next(line for line in a.recommendation if line.topic == "tf32")
    assert "395 vs fp32 50.4 TFLOP/s" in tf32.numbers
    bf16 = a.row("bf16")
    assert bf16 is not None
    assert bf16.verdict == "native"
    assert bf16.verdict_source == "compute capability"
    assert round(bf16.pct_peak or 0, 1) == 78.5
    assert next(line for line in a.recommendation if line.topic == "compile").choice is None  # not measured


def test_h200_claims() -> None:
    assert _claims(H200) == {
        "FP16 GEMM up to 3x FP32": REFUTED,  # 14.8x: the article understates it
        "half precision halves memory": NOT_MEASURABLE,
        "torch.compile gives +10-20%": NOT_MEASURABLE,
        "BF16 needs no GradScaler": CONFIRMED,
        "FP16 tensor cores need cc >= 7.0, BF16 needs cc >= 8.0": CONFIRMED,
    }


def test_turing_gets_fp16_with_grad_scaler_and_no_tf32() -> None:
    a = assess(load_results(T4))
    assert a.choice == "fp16+GradScaler"
    assert "bf16 is emulated on cc 7.5" in a.recommendation[0].text
    assert "38.5 TFLOP/s" in a.recommendation[0].numbers
    topics = {line.topic: line for line in a.recommendation}
    assert "tf32" not in topics
    assert "62% without it" in topics["grad_scaler"].numbers
    assert topics["compile"].choice == "does not pay"
    assert "training 0.97x" in topics["compile"].numbers
    assert _claims(T4)["torch.compile gives +10-20%"] == REFUTED


def test_h100_full_run_confirms_memory_and_compile_claims() -> None:
    a = assess(load_results(H100))
    assert a.choice == "bf16"
    assert next(line for line in a.recommendation if line.topic == "compile").choice == "pays"
    claims = _claims(H100)
    assert claims["half precision halves memory"] == CONFIRMED
    assert claims["torch.compile gives +10-20%"] == CONFIRMED


def test_gpu_missing_from_the_peak_table_has_no_percent_of_peak() -> None:
    a = assess(load_results(UNKNOWN_GPU))
    assert all(row.peak_tflops is None and row.pct_peak is None for row in a.dtypes)
    assert a.choice == "bf16"


def test_half_way_run_still_recommends_from_what_was_measured() -> None:
    a = assess(load_results(HALFWAY))
    assert a.choice == "bf16"  # native on cc 8.0, GEMM 250 vs fp16 255: within 3%
    assert _claims(HALFWAY)["half precision halves memory"] == NOT_MEASURABLE


def test_fp16_faster_than_bf16_on_ampere_picks_fp16() -> None:
    document = json.loads(HALFWAY.read_text())
    document["measurements"]["gemm.bf16.tflops"]["value"] = 180.0
    assert assess(parse_results(json.dumps(document))).choice == "fp16+GradScaler"


def test_half_precision_slower_than_fp32_keeps_fp32_with_tf32() -> None:
    document = json.loads(HALFWAY.read_text())
    for dtype in ("fp16", "bf16"):
        document["measurements"][f"gemm.{dtype}.tflops"]["value"] = 10.0
    a = assess(parse_results(json.dumps(document)))
    assert a.choice == "tf32"
    assert "half precision is slower" in a.recommendation[0].text


def test_a_wrong_native_claim_is_refuted() -> None:
    results = load_results(T4)
    dtypes = dict(results.dtypes)
    dtypes["bf16"] = replace(dtypes["bf16"], verdict="native")  # native bf16 on cc 7.5 would break the rule
    claims = {c.claim: c.verdict for c in assess(replace(results, dtypes=dtypes)).claims}
    assert claims["FP16 tensor cores need cc >= 7.0, BF16 needs cc >= 8.0"] == REFUTED


def test_cpu_only_run_has_no_recommendation() -> None:
    a = assess(parse_results('{"schema": 2, "suite": "pytorch-cuda-conformance", "tests": {}}'))
    assert a.choice is None
    assert "No GPU was measured" in a.recommendation[0].text
    assert all(c.verdict == NOT_MEASURABLE for c in a.claims)


def test_compile_claim_is_judged_on_the_transformer_lm_when_measured() -> None:
    """The real H100 run of 2026-12-05 (evidence/fleet-runs): the LM's compiled training step is 1.11x eager, inside
    the article's +10-20%, while the suite's small model alone would say otherwise."""
    claim = next(c for c in assess(load_results(H100_FLEET)).claims if c.claim == "torch.compile gives +10-20%")
    assert claim.verdict == CONFIRMED
    assert claim.measured.startswith("transformer LM training +11%")
    assert "(judged on transformer LM training)" in claim.measured


def test_gemm_is_reported_as_a_percentage_of_mamf_beside_the_datasheet() -> None:
    """The real H100 run of 2026-12-05 18:27: the 8192^3 bf16 GEMM (754.5 TFLOP/s) against the shape search's
    best (786.1 at 4096x6144x16384) and the 989.4 datasheet peak."""
    bf16 = assess(load_results(H100_FLEET)).row("bf16")
    assert bf16 is not None
    assert bf16.mamf_tflops is not None
    assert round(bf16.mamf_tflops, 1) == 786.1
    assert bf16.pct_mamf is not None
    assert round(bf16.pct_mamf, 1) == 96.0
    assert bf16.pct_peak is not None
    assert round(bf16.pct_peak, 1) == 76.3
    t4 = assess(load_results(T4)).row("fp16")
    assert t4 is not None
    assert t4.pct_mamf is None  # a run without the search shows "-", never a guess
