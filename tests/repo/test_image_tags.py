"""The integration tests' own-candidate check (tests/support/image_tags.py): the candidate tag a build.py run built
into is read from its progress, the line the pipeline logs as it starts the build (plain or coloured); a progress
that names none fails rather than checking nothing; and only the build's own candidates count as left behind, not
another build's on the shared engine."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import docker
import pytest
from rich.console import Console
from rich.text import Text

from pytorch_cuda.errors import EngineError
from pytorch_cuda.image_build.pipeline import PipelineHooks, execute
from pytorch_cuda.matrix.build_matrix import Matrix
from tests.support.fake_engine import FakeEngine
from tests.support.image_tags import built_candidates, left_behind
from tests.support.plans import cu12_plan


def _progress_of_a_failed_build(matrix: Matrix, root: Path, tmp_path: Path, *, colour: bool) -> tuple[str, str]:
    """What cli/building.py prints of a build that fails in the engine ("> " and the pipeline's line), and the
    plan's candidate tag."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=colour, no_color=not colour, soft_wrap=True, width=160)
    hooks = PipelineHooks(
        log=lambda message: console.print(Text("> ", style="bold") + Text(message), highlight=False),
        progress=lambda _: None,
        index_probe=lambda: None,
        log_dir=tmp_path,
    )
    plan = cu12_plan(matrix, root)
    engine = FakeEngine(images={"pytorch-cuda-base/debian:trixie": "b"}, build_error=EngineError("it broke", "x"))
    with pytest.raises(EngineError):
        execute(plan, engine, hooks)
    return out.getvalue(), plan.candidate


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "coloured"])
def test_the_candidate_is_read_from_the_line_the_pipeline_logs(
    matrix: Matrix, root: Path, tmp_path: Path, colour: bool
) -> None:
    progress, candidate = _progress_of_a_failed_build(matrix, root, tmp_path, colour=colour)
    assert ("\x1b[" in progress) is colour
    assert built_candidates(progress) == [candidate]
    assert candidate.startswith("pytorch-cuda:candidate-cu128-runtime-")


def test_a_progress_that_names_no_candidate_fails() -> None:
    with pytest.raises(AssertionError, match="names no candidate tag"):
        built_candidates("> engine: fake engine\nerror: the index did not answer. Fix: mirror it.\n")


class _Images:
    def __init__(self, tags: dict[str, str]) -> None:
        self.tags = tags

    def get(self, ref: str) -> SimpleNamespace:
        if ref not in self.tags:
            raise docker.errors.ImageNotFound(ref)
        return SimpleNamespace(id=self.tags[ref])


def test_only_the_builds_own_candidates_count_as_left_behind() -> None:
    ours, theirs = "pytorch-cuda:candidate-cu128-runtime-0a0a0a0a", "pytorch-cuda:candidate-cu128-runtime-1b1b1b1b"
    images = _Images({theirs: "sha256:x"})
    engine = cast("docker.DockerClient", SimpleNamespace(images=images))
    assert left_behind(engine, [ours]) == []  # another lane's build is running: not ours
    images.tags[ours] = "sha256:x"
    assert left_behind(engine, [ours]) == [ours]  # ours was left behind: the check fails the test
