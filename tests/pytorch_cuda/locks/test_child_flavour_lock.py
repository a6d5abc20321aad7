"""A child flavour's own hash lock (requirements-flavour.lock): installed locked, complete, safe and fresh."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from pytorch_cuda import cli
from pytorch_cuda.cli import building
from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda.image_build import build_plan
from pytorch_cuda.locks.child_flavour import child_lock_problem, flavour_lock_path, lock_defects, refresh_child_lock
from pytorch_cuda.locks.file_format import PYPI_INDEX, parse_lock
from pytorch_cuda.locks.resolving import require_lock, stale_locks
from pytorch_cuda.locks.writing import Resolver
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.variants import all_variants, select_variant
from pytorch_cuda.render import render_variant

CHILD = "images/cu128-jupyter/requirements-flavour.lock"
PARENT = "images/cu128-runtime/requirements.lock"
HASH = "--hash=sha256:" + "c" * 64


def _copy(root: Path, tmp_path: Path) -> Path:
    for folder in ("images", "templates"):
        shutil.copytree(root / folder, tmp_path / folder)
    shutil.copy(root / "matrix.yaml", tmp_path / "matrix.yaml")
    return tmp_path


def unlocked_installs(dockerfile: str) -> list[str]:
    """Every RUN that installs Python packages without --require-hashes from a lock file."""
    runs = re.findall(r"^RUN (?:.*\\\n)*.*$", dockerfile, re.MULTILINE)
    installs = [" ".join(run.split()) for run in runs if "pip install" in run]
    return [run for run in installs if "--require-hashes" not in run or not re.search(r"-r /tmp/\S+\.lock\b", run)]


def test_every_child_dockerfile_installs_only_hash_locked_packages(matrix: Matrix, root: Path) -> None:
    children = [v for v in all_variants(matrix) if v.flavour.parent is not None]
    assert {v.key for v in children} >= {"cu128-jupyter", "cu130-devel"}
    for variant in children:
        dockerfile = (root / "images" / variant.key / "Dockerfile").read_text()
        assert unlocked_installs(dockerfile) == [], variant.key
        flavour_install = next(run for run in re.findall(r"^RUN (?:.*\\\n)*.*$", dockerfile, re.M) if "uv pip" in run)
        for flag in ("--require-hashes", "--no-deps", "--no-build", "--no-config"):
            assert flag in flavour_install, (variant.key, flag)
        assert "&& python -B /tmp/compile-bytecode" in flavour_install, variant.key  # the .pyc files, reproducible
        assert f"source=images/{variant.key}/requirements-flavour.lock" in flavour_install
        assert "--mount=type=secret,id=pip_ca,target=/tmp/secrets/pip_ca,uid=1000" in flavour_install
        assert flavour_install.endswith("&& bash /tmp/clamp-mtimes"), variant.key  # its mtimes: SOURCE_DATE_EPOCH
        assert f"--mount=type=cache,id=uv-{variant.target_name}," in flavour_install
        assert "&& pip check" in flavour_install
        assert "--index-url" not in flavour_install
        assert " -c " not in flavour_install


def test_an_unlocked_child_install_line_is_caught(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    copy = _copy(root, tmp_path)
    old = """RUN --mount=type=secret,id=pip_ca,uid={{ user.uid }} \\
    pip install --no-input --index-url {{ index_url }} \\
      -c {{ paths.requirements }} -r {{ paths.flavour_requirements }}
"""
    partial = copy / "templates/partials/flavour_pip.j2"
    partial.write_text(partial.read_text() + old)
    files = render_variant(matrix, select_variant(matrix, "cu12", "jupyter"), copy / "templates", copy)
    dockerfile = next(f.content for f in files if f.path.name == "Dockerfile")
    assert [run for run in unlocked_installs(dockerfile) if "-c /etc/pytorch-cuda/requirements.txt" in run]


def test_the_committed_child_lock_is_complete_and_adds_only_what_the_parent_lacks(matrix: Matrix, root: Path) -> None:
    text = (root / CHILD).read_text()
    lock, parent = parse_lock(text), parse_lock((root / PARENT).read_text())
    assert lock.index_url == PYPI_INDEX
    assert {"jupyterlab", "ipykernel", "nbclient", "tornado", "pyzmq"} <= set(lock.versions())
    assert lock.versions()["jupyterlab"] == "4.6.6"
    assert all("--hash=sha256:" in entry.text for entry in lock.entries)
    assert not set(lock.versions()) & set(parent.versions())  # torch, numpy, jinja2... stay the parent's
    assert lock_defects(text, parent.versions()) == []
    for variant in all_variants(matrix):
        assert child_lock_problem(matrix, variant, root) is None, variant.key
    assert stale_locks(matrix, all_variants(matrix), root) == []


def _entry(name: str, version: str) -> str:
    return f"{name}=={version} \\\n    {HASH}\n"


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda t: re.sub(r"(^jupyterlab==\S+) \\\n(    --hash=\S+ \\\n)*    --hash=\S+\n", r"\1\n", t, flags=re.M),
         "jupyterlab without a --hash"),
        (lambda t: t + _entry("numpy", "2.0.0"), "changes the parent's pin numpy 2.5.5 -> 2.0.0"),
        (lambda t: t + _entry("torch", "2.9.1"), "repeats the parent's pin torch==2.9.1"),
        (lambda t: t + "jupyterlab>=4\n", "'jupyterlab>=4' is not pinned with =="),
    ],
    ids=["a missing hash", "a changed parent pin", "a repeated parent pin", "a range"],
)  # fmt: skip
def test_an_unsafe_child_lock_is_reported(
    edit: Callable[[str], str], needle: str, matrix: Matrix, root: Path, tmp_path: Path
) -> None:
    copy = _copy(root, tmp_path)
    lock = copy / CHILD
    lock.write_text(edit(lock.read_text()))
    problem = child_lock_problem(matrix, select_variant(matrix, "cu12", "jupyter"), copy)
    assert needle in str(problem)
    stale = stale_locks(matrix, all_variants(matrix), copy)
    assert [str(s.path) for s in stale] == [CHILD]
    assert "run `build.py lock --target cu128 --flavour jupyter`" in stale[0].reason


def test_a_relocked_parent_makes_the_child_lock_stale(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    copy = _copy(root, tmp_path)
    parent = copy / PARENT
    parent.write_text(parent.read_text().replace("filelock==4.3.1", "filelock==4.3.2"))
    problem = child_lock_problem(matrix, select_variant(matrix, "cu12", "jupyter"), copy)
    assert problem == "stale: requirements-flavour.txt or the parent's lock changed since it was locked"


def test_a_changed_flavour_pin_makes_the_child_lock_stale(root: Path, tmp_path: Path) -> None:
    copy = _copy(root, tmp_path)
    bumped = copy / "matrix.yaml"
    bumped.write_text(bumped.read_text().replace('jupyterlab: "4.6.6"', 'jupyterlab: "4.6.7"'))
    matrix = load_matrix(bumped)
    assert "stale" in str(child_lock_problem(matrix, select_variant(matrix, "cu12", "jupyter"), copy))
    assert CHILD in [str(s.path) for s in stale_locks(matrix, all_variants(matrix), copy)]


def test_check_render_fails_on_a_stale_child_lock(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bumped = tmp_path / "matrix.yaml"
    bumped.write_text((root / "matrix.yaml").read_text().replace('ipykernel: "7.4.0"', 'ipykernel: "7.4.1"'))
    assert cli.main(["render", "--check", "--matrix", str(bumped)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert f"{CHILD}: stale: requirements-flavour.txt or the parent's lock changed" in out


def test_a_missing_child_lock_is_stale_and_refuses_the_build(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    copy = _copy(root, tmp_path)
    (copy / CHILD).unlink()
    jupyter = select_variant(matrix, "cu12", "jupyter")
    assert "does not exist" in str(child_lock_problem(matrix, jupyter, copy))
    with pytest.raises(UserError) as info:
        require_lock(jupyter, copy, lambda index: None)
    assert info.value.exit_status == 2
    assert info.value.cause == f"{CHILD} does not exist; a build installs only hash-locked packages"
    assert "python build.py lock --target cu128 --flavour jupyter" in info.value.fix

    def unreachable(index: str) -> None:
        raise EngineError(f"the package index {index} is unreachable from this machine", "x")

    with pytest.raises(EngineError, match="cannot be made here"):
        require_lock(jupyter, copy, unreachable)
    # a child whose parent has no lock either waits for the parent: no stale report of its own
    assert child_lock_problem(matrix, select_variant(matrix, "cu130", "jupyter"), root) is None


def test_a_build_without_its_child_lock_exits_2_before_the_engine(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = _copy(root, tmp_path)
    (copy / CHILD).unlink()
    monkeypatch.setattr(build_plan, "probe_index", lambda index, ca: None)
    monkeypatch.setattr(building, "connect", lambda: pytest.fail("the engine was reached"))
    status = cli.main(["--target", "cu12", "--flavour", "jupyter", "--root", str(copy)])
    assert status == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {CHILD} does not exist; a build installs only hash-locked packages. Fix: run" in err
    assert "build.py lock --target cu128 --flavour jupyter" in err


def test_refresh_child_lock_keeps_only_what_the_parent_lacks(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    copy = _copy(root, tmp_path)
    (copy / CHILD).unlink()
    jupyter = select_variant(matrix, "cu12", "jupyter")
    seen: list[list[str]] = []
    body = _entry("jupyterlab", "4.6.6") + _entry("numpy", "2.5.5") + _entry("torch", "2.9.1") + _entry("zzz", "1")

    def fake_uv(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, body, "")

    change = refresh_child_lock(matrix, jupyter, copy, Resolver(None, lambda index: None, fake_uv))
    assert change.created
    assert change.changes == ("+ jupyterlab 4.6.6", "+ zzz 1")
    argv = seen[0]
    constraints = Path(argv[argv.index("--constraint") + 1])
    assert {"numpy==2.5.5", "torch==2.9.1"} <= set(constraints.read_text().splitlines())
    assert {"--no-build", "--generate-hashes"} <= set(argv)
    assert argv[argv.index("--index-url") + 1] == PYPI_INDEX
    assert set(parse_lock((copy / CHILD).read_text()).versions()) == {"jupyterlab", "zzz"}
    assert child_lock_problem(matrix, jupyter, copy) is None
    assert flavour_lock_path(copy, jupyter) == copy / CHILD


def test_refresh_child_lock_refuses_a_moved_parent_pin(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    def moving(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 0, _entry("numpy", "2.0.0"), "")

    with pytest.raises(EngineError, match=r"numpy 2\.5\.5 -> 2\.0\.0"):
        refresh_child_lock(
            matrix,
            select_variant(matrix, "cu12", "jupyter"),
            _copy(root, tmp_path),
            Resolver(None, lambda index: None, moving),
        )


def test_a_child_lock_needs_its_parent_locked_first(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"its parent's lock images/cu130-runtime/requirements\.lock does not exist"):
        refresh_child_lock(
            matrix,
            select_variant(matrix, "cu130", "jupyter"),
            _copy(root, tmp_path),
            Resolver(None, lambda index: None),
        )
