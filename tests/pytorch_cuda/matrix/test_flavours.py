"""Flavours: parents validated, children rendered FROM their parent, and built after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda.engine.protocol import BuildResult, EngineBuild, ProgressSink
from pytorch_cuda.errors import ChecksFailedError, MatrixError, UserError
from pytorch_cuda.image_build.build_plan import BuildPlan
from pytorch_cuda.image_build.lineage import PARENT_BUILD_ARG, execute_lineage
from pytorch_cuda.image_build.pipeline import PipelineHooks
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.flavours import flavour_packages, lineage, parent_ref
from pytorch_cuda.matrix.tags import tag_set
from pytorch_cuda.matrix.variants import all_variants, select_variant
from pytorch_cuda.render import render_all, render_variant
from tests.support.fake_engine import FakeEngine
from tests.support.plans import cu12_plan

RUNTIME_FULL = "pytorch-cuda:2.9.1-cuda12.8-cudnn9.10-py3.13-runtime"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(text)
    return path


def test_committed_flavours(matrix: Matrix) -> None:
    assert set(matrix.flavours) == {"runtime", "devel", "jupyter"}
    assert matrix.flavours["devel"].parent == "runtime"
    assert matrix.flavours["jupyter"].parent == "runtime"
    assert matrix.flavours["runtime"].parent is None
    assert {v.key for v in all_variants(matrix)} == {
        "cu126-runtime",
        "cu126-jupyter",
        "cu128-runtime",
        "cu128-jupyter",
        "cu130-runtime",
        "cu130-jupyter",
        "cu130-devel",
    }


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "    parent: runtime\n    description: >-\n      runtime plus JupyterLab",
            "    parent: nosuch\n    description: >-\n      runtime plus JupyterLab",
            "parent 'nosuch', which is not one of flavours",
        ),
        (
            "  runtime:\n    template: runtime.Dockerfile.j2\n",
            "  runtime:\n    template: runtime.Dockerfile.j2\n    parent: jupyter\n",
            "cycle: ",
        ),
        (
            "  runtime:\n    template: runtime.Dockerfile.j2\n",
            "  runtime:\n    template: runtime.Dockerfile.j2\n    parent: runtime\n",
            "cycle: runtime -> runtime",
        ),
    ],
)
def test_bad_parents_are_rejected(tmp_path: Path, matrix_text: str, old: str, new: str, message: str) -> None:
    assert old in matrix_text, old
    with pytest.raises(MatrixError) as info:
        load_matrix(_write(tmp_path, matrix_text.replace(old, new, 1)))
    assert message in info.value.paragraph(width=10_000)


def test_cycle_names_the_whole_loop(tmp_path: Path, matrix_text: str) -> None:
    text = matrix_text.replace(
        "  runtime:\n    template: runtime.Dockerfile.j2\n",
        "  runtime:\n    template: runtime.Dockerfile.j2\n    parent: jupyter\n",
        1,
    )
    with pytest.raises(MatrixError) as info:
        load_matrix(_write(tmp_path, text))
    paragraph = info.value.paragraph(width=10_000)
    assert "jupyter -> runtime -> jupyter" in paragraph or "runtime -> jupyter -> runtime" in paragraph


def test_child_tags_follow_the_scheme(matrix: Matrix) -> None:
    jupyter = tag_set(matrix, select_variant(matrix, "cu12", "jupyter"))
    assert jupyter.full_ref == "pytorch-cuda:2.9.1-cuda12.8-cudnn9.10-py3.13-jupyter"
    assert "pytorch-cuda:v2.9-jupyter" in jupyter.alias_refs
    assert "pytorch-cuda:v2.9" not in jupyter.alias_refs
    devel = tag_set(matrix, select_variant(matrix, "cu13", "devel"))
    assert devel.full_ref == "pytorch-cuda:2.9.1-cuda13.0-cudnn9.13-py3.13-devel"
    assert "pytorch-cuda:2.9-cu13-devel" in devel.alias_refs


def test_devel_needs_toolkit_wheels(matrix: Matrix) -> None:
    with pytest.raises(UserError, match="ships ptxas and libnvvm only") as info:
        select_variant(matrix, "cu12", "devel")
    assert "cu130" in info.value.fix


def test_devel_adds_the_same_cuda_release_and_ninja(matrix: Matrix) -> None:
    devel = select_variant(matrix, "cu13", "devel")
    packages = flavour_packages(devel)
    assert packages["nvidia-cuda-nvcc"] == "13.0.48"
    assert packages["nvidia-nvvm"] == "13.0.48"
    assert "ninja" in packages
    assert not any(name.startswith("torch") for name in packages)


def test_lineage_is_root_first(matrix: Matrix) -> None:
    chain = lineage(matrix, select_variant(matrix, "cu12", "jupyter"))
    assert [v.key for v in chain] == ["cu128-runtime", "cu128-jupyter"]
    assert [v.key for v in lineage(matrix, select_variant(matrix, "cu12"))] == ["cu128-runtime"]
    assert parent_ref(matrix, select_variant(matrix, "cu12", "jupyter")) == RUNTIME_FULL


def test_child_dockerfile_builds_from_the_parent(matrix: Matrix, root: Path) -> None:
    files = {
        f.path.name: f.content
        for f in render_variant(matrix, select_variant(matrix, "cu12", "jupyter"), root / "templates")
    }
    assert set(files) == {"Dockerfile", "manifest.json", "requirements-flavour.txt"}
    dockerfile = files["Dockerfile"]
    assert f"ARG PARENT_IMAGE={RUNTIME_FULL}\n" in dockerfile
    assert "\nFROM ${PARENT_IMAGE} AS packages\n" in dockerfile
    # The SBOM lists the packages stage, so a change after it (manifest, labels) does not re-make it.
    assert "FROM packages AS image\n" in dockerfile
    assert "FROM packages AS sbom\n" in dockerfile
    assert "FROM ${PARENT_IMAGE} AS installer\n" in dockerfile  # uv, from images/installer.lock
    install = "--require-hashes --no-deps --no-build -r /tmp/requirements-flavour.lock \\\n"
    assert install + " && python -B /tmp/compile-bytecode" in dockerfile  # the .pyc files: compile-bytecode's
    assert "source=images/cu128-jupyter/requirements-flavour.lock" in dockerfile
    assert "pip install --no-input --disable-pip-version-check --progress-bar off --compile" not in dockerfile
    assert "--mount=type=secret,id=pip_ca" in dockerfile
    assert "VOLUME /home/torch/work" in dockerfile
    assert "--ServerApp.ip=0.0.0.0" in dockerfile
    assert "token=''" not in dockerfile
    assert "disable_check_xsrf" not in dockerfile
    assert '"flavour": "jupyter"' in files["manifest.json"]
    assert "jupyterlab==" in files["requirements-flavour.txt"]


def test_every_variant_is_rendered(matrix: Matrix, root: Path) -> None:
    folders = {f.path.parent.name for f in render_all(matrix, root / "templates")} - {"bin"}  # images/bin: commands
    assert folders == {v.key for v in all_variants(matrix)}


def _plans(matrix: Matrix, root: Path, flavour: str) -> list[BuildPlan]:
    return [cu12_plan(matrix, root, variant) for variant in lineage(matrix, select_variant(matrix, "cu12", flavour))]


def _hooks(tmp_path: Path) -> PipelineHooks:
    return PipelineHooks(log=lambda _: None, progress=lambda _: None, index_probe=lambda: None, log_dir=tmp_path)


def test_child_is_built_from_the_checked_parent(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    builds: list[dict[str, str]] = []

    class RecordingEngine(FakeEngine):
        def build(self, request: EngineBuild, on_progress: ProgressSink) -> BuildResult:
            builds.append(dict(request.build_args))
            return super().build(request, on_progress)

    engine = RecordingEngine(images={"pytorch-cuda-base/debian:trixie": "sha256:base"})
    outcomes = execute_lineage(_plans(matrix, root, "jupyter"), engine, _hooks(tmp_path))
    assert [o.plan.variant.key for o in outcomes] == ["cu128-runtime", "cu128-jupyter"]
    assert builds == [
        {"BASE_IMAGE_ID": "sha256:base"},
        {"BASE_IMAGE_ID": "sha256:base", PARENT_BUILD_ARG: RUNTIME_FULL},
    ]
    runtime_tagged = engine.calls.index(f"tag {RUNTIME_FULL}")
    child_built = next(i for i, c in enumerate(engine.calls) if c.startswith("build ") and "jupyter" in c)
    assert runtime_tagged < child_built  # the parent was checked and tagged before the child was built
    assert engine.images["pytorch-cuda:v2.9-jupyter"] == "sha256:new"


def test_failed_parent_builds_no_child(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    engine = FakeEngine(images={"pytorch-cuda-base/debian:trixie": "sha256:base"}, run_exit_code=1)
    with pytest.raises(ChecksFailedError):
        execute_lineage(_plans(matrix, root, "jupyter"), engine, _hooks(tmp_path))
    assert not any("jupyter" in c for c in engine.calls)
