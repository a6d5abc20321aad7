from __future__ import annotations

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.tags import candidate_by_digest, candidate_ref, tag_set
from pytorch_cuda.matrix.variants import select_variant


def test_default_target_tags(matrix: Matrix) -> None:
    tags = tag_set(matrix, select_variant(matrix, "cu12"))
    assert tags.full_ref == "pytorch-cuda:2.9.1-cuda12.8-cudnn9.10-py3.13-runtime"
    assert tags.alias_refs == (
        "pytorch-cuda:2.9-cu128-runtime",
        "pytorch-cuda:2.9-cu12-runtime",
        "pytorch-cuda:v2.9-runtime",
        "pytorch-cuda:v2.9",
    )


def test_only_the_default_target_gets_v29(matrix: Matrix) -> None:
    for name in ("cu126", "cu13"):
        refs = tag_set(matrix, select_variant(matrix, name)).all_refs
        assert not any(ref.startswith("pytorch-cuda:v2.9") for ref in refs), refs
    assert tag_set(matrix, select_variant(matrix, "cu130")).full == "2.9.1-cuda13.0-cudnn9.13-py3.13-runtime"


def test_candidate_is_separate(matrix: Matrix) -> None:
    variant = select_variant(matrix, "default")
    assert candidate_ref(matrix, variant, "abc") == "pytorch-cuda:candidate-cu128-runtime-abc"
    assert candidate_ref(matrix, variant, "abc") not in tag_set(matrix, variant).all_refs


def test_the_candidate_by_digest_is_the_variants_own() -> None:
    """A child's push also pushed its parent's candidate: the child's is the one its GPU jobs test."""
    digests = {
        "ghcr.io/o/pytorch-cuda:candidate-cu128-runtime-7": "sha256:" + "a" * 64,
        "ghcr.io/o/pytorch-cuda:candidate-cu128-jupyter-7": "sha256:" + "b" * 64,
    }
    assert candidate_by_digest(digests, "cu128-jupyter") == "ghcr.io/o/pytorch-cuda@sha256:" + "b" * 64
    assert candidate_by_digest(digests, "cu128-runtime") == "ghcr.io/o/pytorch-cuda@sha256:" + "a" * 64
    assert candidate_by_digest({"ghcr.io/o/pytorch-cuda:v2.9": "sha256:" + "c" * 64}, "cu128-runtime") is None
