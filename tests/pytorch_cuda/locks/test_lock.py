"""The hash locks: every committed lock is single-index and qualified; stale locks are caught; `lock` diffs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pytorch_cuda.errors import EngineError, UserError
from pytorch_cuda.locks.file_format import (
    INSTALLER_LOCK,
    LAYERS,
    PYPI_INDEX,
    UV_VERSION,
    diff_versions,
    format_lock,
    input_digest,
    parse_lock,
    slice_layers,
)
from pytorch_cuda.locks.resolving import installed_lock, lock_problem, refresh_lock, require_lock, stale_locks
from pytorch_cuda.locks.writing import Resolver
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.variants import all_variants, select_variant

HASH = "--hash=sha256:" + "a" * 64
BODY = f"""\
numpy==2.5.5 \\
    {HASH}
    # via -r requirements.txt
nvidia-cublas-cu12==12.8.4.1 \\
    {HASH}
    # via torch
nvidia-ml-py==13.615.71 \\
    {HASH}
torch==2.9.1 \\
    {HASH}
    # via -r requirements.txt
triton==3.5.1 \\
    {HASH}
"""


def _index_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"\s*--(extra-)?index-url\b|\s*-i\s", line)]


def _pins(text: str) -> dict[str, str]:
    return dict(re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", text, re.MULTILINE))


def check_single_index(text: str, index: str) -> list[str]:
    """What is wrong with a requirements/lock text for a target on ``index`` (empty: nothing)."""
    problems = []
    lines = _index_lines(text)
    if any("--extra-index-url" in line for line in lines) or len(lines) > 1:
        problems.append(f"more than one index: {lines}")
    if lines and lines[0].split()[-1] != index:
        problems.append(f"index {lines[0]} is not the target's {index}")
    torch = _pins(text).get("torch")
    if torch is not None and index != PYPI_INDEX and "+" not in torch:
        problems.append(f"torch=={torch} has no local version on {index}: PyPI's plain wheel would satisfy it")
    return problems


def test_every_committed_lock_and_requirements_is_single_index_and_qualified(matrix: Matrix, root: Path) -> None:
    checked = 0
    for variant in all_variants(matrix):
        index = str(variant.target.index).rstrip("/")
        for path in sorted((root / "images" / variant.key).glob("*")):
            if path.name == "requirements.txt" or path.suffix == ".lock":
                assert check_single_index(path.read_text(), index) == [], path
                checked += 1
        assert "--extra-index-url" not in (root / "images" / variant.key / "Dockerfile").read_text()
    assert checked >= 3 + len(LAYERS) + 1


@pytest.mark.parametrize(
    ("text", "index", "needle"),
    [
        ("torch==2.9.1\n", "https://download.pytorch.org/whl/cu130", "no local version"),
        ("--index-url https://x/simple\n--extra-index-url https://pypi.org/simple\n", "https://x/simple", "more than"),
        ("--index-url https://evil/simple\ntorch==2.9.1+cu130\n", "https://x/simple", "is not the target's"),
    ],
)
def test_the_single_index_check_can_fail(text: str, index: str, needle: str) -> None:
    assert needle in " ".join(check_single_index(text, index))


def test_non_pypi_requirements_pin_the_local_version(root: Path) -> None:
    assert "torch==2.9.1+cu130\n" in (root / "images/cu130-runtime/requirements.txt").read_text()
    assert "torch==2.9.1\n" in (root / "images/cu128-runtime/requirements.txt").read_text()


def test_cu128_lock_pins_everything_with_hashes(root: Path) -> None:
    text = (root / "images/cu128-runtime/requirements.lock").read_text()
    lock = parse_lock(text)
    assert lock.index_url == PYPI_INDEX
    assert len(lock.entries) >= 30
    assert all("--hash=sha256:" in entry.text for entry in lock.entries)
    assert {"filelock", "sympy", "setuptools", "typing-extensions", "torch"} <= set(lock.versions())


def test_parse_format_slice_round_trip() -> None:
    text = format_lock(BODY, index_url=PYPI_INDEX, digest="b" * 64, command="x", requirements="r.txt")
    lock = parse_lock(text)
    assert lock.input_digest == "b" * 64
    assert lock.versions() == {
        "numpy": "2.5.5",
        "nvidia-cublas-cu12": "12.8.4.1",
        "nvidia-ml-py": "13.615.71",
        "torch": "2.9.1",
        "triton": "3.5.1",
    }
    slices = slice_layers(lock, ["numpy", "nvidia-ml-py"])
    assert list(slices) == [layer.file for layer in LAYERS]
    nvidia, torch, python = (set(parse_lock(t).versions()) for t in slices.values())
    assert (nvidia, torch, python) == ({"nvidia-cublas-cu12"}, {"torch", "triton"}, {"numpy", "nvidia-ml-py"})
    assert all(t.count("--index-url") == 1 and HASH in t for t in slices.values())


def test_diff_versions() -> None:
    old = {"numpy": "2.5.4", "gone": "1.0", "same": "1"}
    new = {"numpy": "2.5.5", "new": "2.0", "same": "1"}
    assert diff_versions(old, new) == ["- gone 1.0", "+ new 2.0", "  numpy 2.5.4 -> 2.5.5"]


def _copy(root: Path, tmp_path: Path) -> Path:
    shutil.copytree(root / "images", tmp_path / "images")
    shutil.copy(root / "matrix.yaml", tmp_path / "matrix.yaml")
    return tmp_path


def test_a_changed_requirement_makes_the_lock_stale(root: Path, tmp_path: Path) -> None:
    copy = _copy(root, tmp_path)
    bumped = copy / "matrix.yaml"
    bumped.write_text(bumped.read_text().replace('numpy: "2.5.5"', 'numpy: "2.5.6"'))
    matrix = load_matrix(bumped)
    variant = select_variant(matrix, "cu12")
    assert lock_problem(matrix, variant, copy) == "stale: requirements.txt changed since it was locked"
    assert [str(s.path) for s in stale_locks(matrix, [variant], copy)] == ["images/cu128-runtime/requirements.lock"]


def test_a_lock_from_another_index_is_refused(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    copy = _copy(root, tmp_path)
    lock = copy / "images/cu128-runtime/requirements.lock"
    lock.write_text(lock.read_text().replace(f"--index-url {PYPI_INDEX}", "--index-url https://evil.example/simple"))
    problem = lock_problem(matrix, select_variant(matrix, "cu12"), copy)
    assert "resolved from https://evil.example/simple" in str(problem)


def test_no_lock_refuses_the_build_naming_the_unreachable_index(matrix: Matrix, root: Path) -> None:
    def unreachable(index: str) -> None:
        raise EngineError(f"the package index {index} is unreachable from this machine", "x")

    with pytest.raises(EngineError) as info:
        require_lock(select_variant(matrix, "cu130"), root, unreachable)
    assert "https://download.pytorch.org/whl/cu130 is unreachable" in info.value.cause
    assert "lock --target cu130` on a machine where download.pytorch.org is reachable" in info.value.fix
    with pytest.raises(UserError, match="does not exist"):
        require_lock(select_variant(matrix, "cu130"), root, lambda index: None)
    require_lock(select_variant(matrix, "cu12"), root, unreachable)  # locked: no probe needed


def test_refresh_lock_writes_a_fresh_lock_and_says_what_changed(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    copy = _copy(root, tmp_path)
    variant = select_variant(matrix, "cu12")
    seen: list[list[str]] = []

    def fake_uv(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, BODY.replace("numpy==2.5.5", "numpy==2.5.6"), "")

    change = refresh_lock(matrix, variant, copy, Resolver(None, lambda index: None, fake_uv))
    assert "  numpy 2.5.5 -> 2.5.6" in change.changes
    assert "- sympy 1.14.0" in change.changes
    argv = seen[0]
    assert argv[argv.index("--python-platform") + 1] == "x86_64-manylinux_2_28"
    assert argv[argv.index("--python-version") + 1] == "3.13"
    assert argv[argv.index("--python") + 1] == sys.executable  # no search of PATH for a 3.13 (slow behind pyenv)
    assert argv[argv.index("--index-url") + 1] == PYPI_INDEX
    assert "--generate-hashes" in argv
    # uv runs from the checkout, so its `# via -r` comments name images/... wherever the checkout is
    assert argv[1:3] == ["--directory", str(copy)]
    assert str(copy / "images/cu128-runtime/requirements.txt") in argv
    assert lock_problem(matrix, variant, copy) is None


def test_uv_failure_is_one_paragraph(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    def failing(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 1, "", "error: No solution found: pytest was not found")

    with pytest.raises(EngineError, match="pytest was not found"):
        refresh_lock(
            matrix, select_variant(matrix, "cu12"), _copy(root, tmp_path), Resolver(None, lambda index: None, failing)
        )


def test_input_digest_covers_index_and_requirements() -> None:
    assert input_digest("a\n", "https://x") != input_digest("a\n", "https://y")
    assert input_digest("a\n", "https://x") != input_digest("b\n", "https://x")


def test_installer_lock_pins_the_uv_the_builder_uses(root: Path) -> None:
    lock = parse_lock((root / INSTALLER_LOCK).read_text())
    assert lock.versions() == {"uv": UV_VERSION}
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert f"uv=={UV_VERSION}" in project["project"]["dependencies"]


@pytest.mark.parametrize(
    ("bound", "lock", "command"),
    [
        (
            "images/cu128-runtime/layer-2-torch.lock",
            "images/cu128-runtime/requirements.lock (its layer slice layer-2-torch.lock)",
            "python build.py lock --target cu128",
        ),
        (
            "images/cu128-jupyter/requirements-flavour.lock",
            "images/cu128-jupyter/requirements-flavour.lock",
            "python build.py lock --target cu128 --flavour jupyter",
        ),
        ("images/installer.lock", "images/installer.lock", "python build.py lock"),
        (None, "the lock", "python build.py lock --target TARGET"),
    ],
)
def test_a_build_step_s_lock_is_named_with_the_command_that_re_resolves_it(
    bound: str | None, lock: str, command: str
) -> None:
    """What the pipeline hands to the engine's failures: a layer slice is cut from its requirements.lock."""
    assert installed_lock(bound) == (lock, command)
