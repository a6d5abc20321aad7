"""A new GPU is one entry of the contract's GPU table (pytorch_cuda_contract/gpu_models.py): the suite's expectations,
the host report, the site's "can I use bf16?" page and fault_coverage's page all read it from there."""

from __future__ import annotations

import json

import pytest

from conformance.support.expectations.bounds import fp32_kernel_gate
from conformance.support.expectations.ratios import NEWER_THAN_TABLE, expected_ratios
from fault_coverage.coverage_page import card_facts
from pytorch_cuda.site.expected import expected_table
from pytorch_cuda_contract import gpu_models
from pytorch_cuda_contract.advice import assess
from pytorch_cuda_contract.gpu import ComputeCapability
from pytorch_cuda_contract.gpu_models import INTERCONNECTS, GpuModel, Peaks, find_model
from pytorch_cuda_contract.peaks import lookup_peak, peak_table
from pytorch_cuda_contract.results_file import ConformanceResults, parse_results
from tests.support.recorded_runs import UNKNOWN_GPU

DEVICE = "NVIDIA RTX PRO 9999 Blackwell"  # the recorded run of a GPU no table knows (tests/fixtures)
FICTIONAL = GpuModel(
    name="RTX PRO 9999",
    match=("RTX", "PRO", "9999"),
    capability=ComputeCapability(13, 0),
    interconnect="nvlink",
    peaks=Peaks(fp32=100.0, tf32=1000.0, fp16=2000.0, bf16=2000.0),
    listed_as="RTX PRO 9999",
)


def _without_gemms() -> ConformanceResults:
    document = json.loads(UNKNOWN_GPU.read_text(encoding="utf-8"))
    document["measurements"] = {k: v for k, v in document["measurements"].items() if not k.startswith("gemm.")}
    return parse_results(json.dumps(document))


@pytest.fixture
def with_fictional_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_models, "GPU_MODELS", (*gpu_models.GPU_MODELS, FICTIONAL))


def test_without_the_entry_nobody_knows_the_gpu() -> None:
    assert find_model(DEVICE) is None
    assert lookup_peak(DEVICE) is None
    assert expected_ratios((13, 0), DEVICE) == NEWER_THAN_TABLE
    assert all(row.peak_tflops is None for row in assess(_without_gemms()).dtypes)
    assert "RTX PRO 9999" not in {row.gpu for row in expected_table([])}


@pytest.mark.usefixtures("with_fictional_gpu")
def test_one_entry_reaches_the_suite_the_report_the_site_and_fault_coverage() -> None:
    # the suite: % of datasheet and the fp32 ceiling from its peaks, the tensor-core ratios from its datasheet
    peak = lookup_peak(DEVICE)
    assert peak is not None
    assert (peak.gpu, peak.bf16) == ("RTX PRO 9999", 2000.0)
    ratios = expected_ratios((13, 0), DEVICE)
    assert ratios is not None
    assert not ratios.conservative
    assert (ratios.fp16, ratios.bf16, ratios.tf32) == (20.0, 20.0, 10.0)
    assert "RTX PRO 9999" in ratios.family
    assert fp32_kernel_gate(DEVICE, (13, 0), None).upper == pytest.approx(115.0)  # 1.15x the 100 datasheet peak
    # the host report: the datasheet peak in the table of a run that did not measure the GEMMs
    rows = {row.dtype: row for row in assess(_without_gemms()).dtypes}
    assert (rows["bf16"].peak_tflops, rows["fp32"].peak_tflops) == (2000.0, 100.0)
    # the site's expected page: a row of its own, from the table's capability
    site = {row.gpu: row for row in expected_table([])}["RTX PRO 9999"]
    assert (site.cc, site.architecture, site.bf16, site.interconnect) == ((13, 0), "Blackwell", True, "nvlink")
    # fault_coverage's page header
    assert card_facts({"gpu": DEVICE, "compute_capability": "13.0"}) == "RTX PRO 9999, Blackwell, cc 13.0, nvlink"


def test_every_entry_is_well_formed() -> None:
    names = [m.name for m in gpu_models.GPU_MODELS]
    assert len(names) == len(set(names))
    for model in gpu_models.GPU_MODELS:
        assert model.interconnect in INTERCONNECTS, model
        assert find_model(" ".join(model.match)) == model, f"{model.name}: its own name finds another entry"
        if model.peaks is not None:
            assert model.peaks.fp16 >= model.peaks.fp32
    assert [s.gpu for s in peak_table()] == [m.name for m in gpu_models.GPU_MODELS if m.peaks]


def test_a_model_is_found_by_whole_words_and_the_pcie_part_before_the_sxm_part() -> None:
    assert find_model("NVIDIA H100 PCIe") == gpu_models.model_named("H100 PCIe")
    assert find_model("NVIDIA H100 80GB HBM3") == gpu_models.model_named("H100 SXM")
    assert find_model("NVIDIA GeForce RTX 4090") == gpu_models.model_named("RTX 4090")
    assert lookup_peak("NVIDIA GeForce RTX 4090") is None  # in the table, without a datasheet number
    with pytest.raises(KeyError):
        gpu_models.model_named("X1")
