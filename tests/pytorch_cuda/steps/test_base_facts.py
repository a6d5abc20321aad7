"""The base's facts: a bootstrapped base records its mmdebstrap inputs; the build passes the base's ID."""

from __future__ import annotations

import json
from pathlib import Path

from pytorch_cuda.image_build.build_plan import make_plan
from pytorch_cuda.image_build.pipeline import PipelineHooks, execute
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.labels import BuildFacts
from pytorch_cuda.matrix.pinned_base import BOOTSTRAP_LABEL
from pytorch_cuda.matrix.variants import select_variant
from pytorch_cuda.steps.base_image import bootstrap_command, bootstrap_labels
from tests.support.fake_engine import FakeEngine


def test_bootstrap_labels_record_the_mmdebstrap_inputs(matrix: Matrix, tmp_path: Path) -> None:
    output = tmp_path / "rootfs.tar"
    (change,) = bootstrap_labels(bootstrap_command(matrix.bases["trixie"], output), output)
    assert change.startswith(f"LABEL {BOOTSTRAP_LABEL}=")
    assert "mmdebstrap --variant=minbase --components=main" in change
    assert "trixie OUTPUT http://deb.debian.org/debian" in change
    assert str(tmp_path) not in change  # the temporary path would make every bootstrap differ
    assert f"{BOOTSTRAP_LABEL}-date=" in change


def test_the_build_gets_the_base_id_and_the_manifest_names_the_record(
    matrix: Matrix, root: Path, tmp_path: Path
) -> None:
    engine = FakeEngine(images={"pytorch-cuda-base/debian:trixie": "sha256:base"})
    variant = select_variant(matrix, "cu12")
    plan = make_plan(
        matrix, variant, root=root, facts=BuildFacts("a", "b"), build_id="t", ca_bundle=None, ca_source=None
    )
    execute(plan, engine, PipelineHooks(lambda _: None, lambda _: None, lambda: None, tmp_path))
    assert engine.last_build is not None
    assert engine.last_build.build_args == {"BASE_IMAGE_ID": "sha256:base"}
    manifest = json.loads((root / "images/cu128-runtime/manifest.json").read_text())
    assert manifest["base"]["record"] == "/etc/pytorch-cuda/base.json"
    dockerfile = (root / "images/cu128-runtime/Dockerfile").read_text()
    assert "ARG BASE_IMAGE_ID" in dockerfile
    assert "> /etc/pytorch-cuda/base.json" in dockerfile
