"""The bump's precision diff like for like: `report --diff NEW --baseline-store DIR` takes the latest released
run of NEW's variant on NEW's GPU class from a real results store (build.py results ingest), and the diff says
loudly (Markdown and HTML) when torch, CUDA, the GPU or the variant differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"
H200_BARE = Path(__file__).resolve().parents[3] / "evidence" / "reports" / "h200" / "results.json"


def _candidate(tmp_path: Path, fixture: str, scale: float) -> Path:
    """A bump candidate's run: the fixture's run in a new image, a day later, its bf16 GEMM ratio scaled."""
    document: dict[str, Any] = json.loads((FIXTURES / fixture).read_text())
    document["image"]["digest"] = "sha256:" + "e" * 64
    document["started_at"] = "2026-12-05T04:00:00+00:00"
    metric = document["measurements"].get("gemm.bf16.x_fp32", {})
    for key in ("value", "min", "median", "max"):
        if isinstance(metric.get(key), int | float):
            metric[key] *= scale
    path = tmp_path / f"candidate-{fixture}"
    path.write_text(json.dumps(document))
    return path


def _diff(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    capsys.readouterr()
    status = main(["report", "--diff", *argv, "--json"])
    captured = capsys.readouterr()
    return status, json.loads(captured.out) if status == 0 else {}, captured.err


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    folder = tmp_path / "store"
    runs = [str(FIXTURES / name) for name in ("h100-v2.json", "t4-v2.json")]
    assert main(["results", "ingest", *runs, "--store", str(folder)]) == 0
    capsys.readouterr()
    return folder


def test_the_same_variant_on_the_same_gpu_is_the_baseline(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = _candidate(tmp_path, "h100-v2.json", 0.5)
    html = tmp_path / "diff.html"
    argv = [str(H200_BARE), str(candidate), "--baseline-store", str(store), "--html", str(html)]
    status, result, _ = _diff([*argv, "--html-url", "https://example.test/diff.html"], capsys)
    assert status == 0
    assert "the latest released run of cu128-runtime on NVIDIA H100 80GB HBM3" in result["baseline"]
    assert result["not_like_for_like"] == []  # the H200 bare run given as the fallback is not used
    assert "Not like for like" not in result["markdown"]
    assert "[The diff as an HTML page](https://example.test/diff.html)" in result["markdown"]
    assert result["regressions"] >= 1  # the halved bf16 ratio
    assert "Not like for like" not in html.read_text()


def test_no_released_run_on_that_gpu_falls_back_loudly(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = _candidate(tmp_path, "a100-halfway-v2.json", 1.0)
    html = tmp_path / "diff.html"
    status, result, _ = _diff(
        [str(H200_BARE), str(candidate), "--baseline-store", str(store), "--html", str(html)], capsys
    )
    assert status == 0
    assert "no released run of cu128-runtime on NVIDIA A100-SXM4-80GB" in result["baseline"]
    assert result["not_like_for_like"] == [
        "torch: 2.11.0+cu130 (old) vs 2.9.1+cu128 (new)",
        "CUDA: 13.0 (old) vs 12.8 (new)",
        "GPU: NVIDIA H200 (old) vs NVIDIA A100-SXM4-80GB (new)",
        "variant: bare host (no image) (old) vs cu128-runtime (new)",
    ]
    assert result["markdown"].splitlines()[2:4] == [
        "> [!CAUTION]",
        "> **Not like for like.** These runs differ in more than the candidate's pins:",
    ]
    page = html.read_text()
    assert "<strong>Not like for like.</strong>" in page
    assert "<li>torch: 2.11.0+cu130 (old) vs 2.9.1+cu128 (new)</li>" in page
    status, _, err = _diff([str(candidate), "--baseline-store", str(store)], capsys)
    assert status == 2
    assert "holds no released run of cu128-runtime on NVIDIA A100-SXM4-80GB" in " ".join(err.split())


def test_the_bump_comment_diffs_against_the_store_and_links_the_html() -> None:
    from tests.support.workflow_files import load, scripts

    comment = load("bump.yml")["jobs"]["gpu-comment"]
    text = "\n".join(scripts({"jobs": {"c": comment}}))
    assert "store=(--baseline-store released)" in text
    assert 'build.py report --diff "$RELEASE_RESULTS" "$results" "${store[@]}"' in text
    upload = next(step for step in comment["steps"] if step.get("id") == "html")
    post = comment["steps"][comment["steps"].index(upload) + 1]
    assert post["env"]["HTML_URL"] == "${{ steps.html.outputs.artifact-url }}"  # uploaded before the comment


def test_a_candidate_already_in_the_store_is_never_its_own_baseline(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = _candidate(tmp_path, "h100-v2.json", 0.5)
    own = json.loads(candidate.read_text())
    own["image"]["digest"] = None  # a CI run that did not record its digest, stored before the diff ran
    candidate.write_text(json.dumps(own))
    assert (
        main(["results", "ingest", str(candidate), "--store", str(store), "--image-digest", "sha256:" + "f" * 64]) == 0
    )
    status, result, _ = _diff([str(candidate), "--baseline-store", str(store)], capsys)
    assert status == 0
    from pytorch_cuda.run_store import results_sha256

    assert results_sha256(own) not in result["baseline"]  # the released run, not the candidate's stored copy
    assert "dcdcdcdc" in result["baseline"]  # h100-v2.json's image digest
    assert result["regressions"] >= 1  # the halved bf16 ratio is seen, not diffed away against itself
