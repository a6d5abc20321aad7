"""A bootstrapped base follows its recipe (issue 40): one made by another mmdebstrap command (before the empty
/etc/hosts and resolv.conf, or at another file time) makes every layer above it differ between builds, so the
build bootstraps it again; a pulled base, which carries no recipe, is used as it is."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.pinned_base import BOOTSTRAP_LABEL
from pytorch_cuda.steps.base_image import (
    MOUNT_POINT_HOOK,
    bootstrap_command,
    bootstrap_inputs,
    bootstrap_labels,
    ensure_base,
)
from tests.support.fake_engine import FakeEngine

BASE = "pytorch-cuda-base/debian:trixie"
EPOCH = 1796083200


def _mmdebstrap(seen: list[list[str]]):  # type: ignore[no-untyped-def]
    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        Path(next(arg for arg in argv if arg.endswith(".tar"))).write_text("rootfs")
        return subprocess.CompletedProcess(argv, 0, "", "")

    return run


def _recipe(matrix: Matrix, epoch: int) -> str:
    return bootstrap_inputs(bootstrap_command(matrix.bases["trixie"], Path("OUTPUT"), epoch), Path("OUTPUT"))


@pytest.fixture(autouse=True)
def _mmdebstrap_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/" + name)


def test_the_bootstrap_runs_at_the_file_time_and_leaves_the_mount_points(matrix: Matrix, tmp_path: Path) -> None:
    argv = bootstrap_command(matrix.bases["trixie"], tmp_path / "x.tar", EPOCH)
    assert argv[:3] == ["env", f"SOURCE_DATE_EPOCH={EPOCH}", "mmdebstrap"]
    assert MOUNT_POINT_HOOK in argv
    assert ': > "$1/etc/hosts"; : > "$1/etc/resolv.conf"' in MOUNT_POINT_HOOK


def test_the_recorded_recipe_keeps_its_dollar_signs(matrix: Matrix, tmp_path: Path) -> None:
    """`docker import --change LABEL ...` expands `$1` as a Dockerfile does: unescaped, the label recorded the hook
    as `: > "/etc/hosts"`, which never equals the recipe, and every build bootstrapped the base again."""
    tarball = tmp_path / "x.tar"
    [line] = bootstrap_labels(bootstrap_command(matrix.bases["trixie"], tarball, EPOCH), tarball, EPOCH)
    assert re.search(r"(?<!\\)\$", line) is None, line
    assert "\\$1/etc/hosts" in line


def test_a_base_of_an_older_recipe_is_bootstrapped_again(matrix: Matrix) -> None:
    older = _recipe(matrix, EPOCH).replace(f" {MOUNT_POINT_HOOK}", "")  # before the empty /etc/hosts
    engine = FakeEngine(images={BASE: "sha256:old-base"}, labels={BASE: {BOOTSTRAP_LABEL: older}})
    seen: list[list[str]] = []
    logged: list[str] = []
    outcome = ensure_base(engine, matrix.bases["trixie"], log=logged.append, run=_mmdebstrap(seen),
                          source_date_epoch=EPOCH)  # fmt: skip
    assert outcome.how == "bootstrapped"
    assert engine.calls[-1] == f"import {BASE}"
    assert MOUNT_POINT_HOOK in seen[0]
    assert any("bootstrapped by another recipe" in line for line in logged)


@pytest.mark.parametrize(
    "labels",
    [
        pytest.param("same", id="its recipe is this one"),
        pytest.param(None, id="pulled: no recipe"),
    ],
)
def test_a_base_of_this_recipe_or_a_pulled_one_is_used(matrix: Matrix, labels: str | None) -> None:
    recorded = {BASE: {BOOTSTRAP_LABEL: _recipe(matrix, EPOCH)}} if labels else {}
    engine = FakeEngine(images={BASE: "sha256:base"}, labels=recorded)
    outcome = ensure_base(engine, matrix.bases["trixie"], log=lambda _: None, source_date_epoch=EPOCH)
    assert (outcome.how, outcome.image_id) == ("present", "sha256:base")
    assert engine.calls == []


def test_another_file_time_is_another_recipe(matrix: Matrix) -> None:
    engine = FakeEngine(images={BASE: "sha256:old-base"}, labels={BASE: {BOOTSTRAP_LABEL: _recipe(matrix, EPOCH)}})
    seen: list[list[str]] = []
    outcome = ensure_base(engine, matrix.bases["trixie"], log=lambda _: None, run=_mmdebstrap(seen),
                          source_date_epoch=EPOCH + 1)  # fmt: skip
    assert outcome.how == "bootstrapped"
    assert seen[0][1] == f"SOURCE_DATE_EPOCH={EPOCH + 1}"
