"""One model writes and reads the build manifest: what the builder renders parses back into the same value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.flavours import child_manifest_json
from pytorch_cuda.matrix.manifest_writer import build_manifest, manifest_json
from pytorch_cuda.matrix.variants import all_variants
from pytorch_cuda_contract.manifest import ManifestError, parse_manifest


def test_every_rendered_manifest_reads_back_into_the_model_it_was_written_from(matrix: Matrix, root: Path) -> None:
    for variant in all_variants(matrix):
        written = build_manifest(matrix, variant)
        text = child_manifest_json(matrix, variant) if variant.flavour.parent else manifest_json(matrix, variant)
        assert text == (root / "images" / variant.key / "manifest.json").read_text(encoding="utf-8")
        read = parse_manifest(json.loads(text))
        assert read.as_text() == text, variant.key
        if variant.flavour.parent:
            assert read.parent == variant.flavour.parent
            assert read.flavour_packages
        else:
            assert read == written, variant.key


def test_a_bad_base_section_is_a_manifest_error(matrix: Matrix) -> None:
    document = build_manifest(matrix, all_variants(matrix)[0]).as_json()
    document["base"] = {"upstream": "debian"}
    with pytest.raises(ManifestError, match="'base' must be an object with a string 'image'"):
        parse_manifest(document)
