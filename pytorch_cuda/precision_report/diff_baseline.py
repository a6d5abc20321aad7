"""Like for like: the released run to compare a candidate with (the same image variant on the same GPU class),
and, whatever the baseline, every way the two runs differ that makes their numbers incomparable (torch, CUDA,
the GPU, the variant), for the diff to say loudly."""

from __future__ import annotations

from collections.abc import Sequence

from pytorch_cuda_contract.results_file import ConformanceResults

NO_IMAGE = "bare host (no image)"


def variant_of(results: ConformanceResults) -> str:
    """The image variant the run tested (its manifest's target and flavour), or a bare host."""
    content = results.manifest.get("content")
    if isinstance(content, dict) and content.get("target"):
        return f"{content['target']}-{content.get('flavour') or 'runtime'}"
    return NO_IMAGE


def gpu_class(results: ConformanceResults) -> str:
    return " + ".join(sorted({gpu.name for gpu in results.gpus})) or "no GPU"


def _facts(results: ConformanceResults) -> dict[str, str]:
    environment = results.environment
    return {
        "torch": str(environment.get("torch") or "-"),
        "CUDA": str(environment.get("cuda") or "-"),
        "GPU": gpu_class(results),
        "variant": variant_of(results),
    }


def mismatches(old: ConformanceResults, new: ConformanceResults) -> tuple[str, ...]:
    """'torch: 2.11.0+cu130 (old) vs 2.9.1+cu128 (new)' for each fact that differs."""
    before, after = _facts(old), _facts(new)
    return tuple(f"{key}: {before[key]} (old) vs {after[key]} (new)" for key in before if before[key] != after[key])


def pick_baseline(candidate: ConformanceResults, released: Sequence[ConformanceResults]) -> ConformanceResults | None:
    """The latest released run of the candidate's variant on its GPU class (never the candidate's own image)."""
    same = [
        run
        for run in released
        if variant_of(run) == variant_of(candidate)
        and gpu_class(run) == gpu_class(candidate)
        and (candidate.image.digest is None or run.image.digest != candidate.image.digest)
    ]
    return max(same, key=lambda run: run.started_at or "", default=None)
